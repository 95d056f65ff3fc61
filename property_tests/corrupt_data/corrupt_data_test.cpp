// corrupt_data_test.cpp: corrupted or foreign data given to the commands: each case is refused with one line naming the
// file and what was expected, and its own exit status (common/exit_status.h: 2 usage, 3 missing, 4 corrupt or
// foreign), never a pass and never a crash. The intact copy passes (the control: the command reads these files).
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/remove_tree.h"
#include "property_tests/support/golden_paths.h"
#include "property_tests/support/subprocess.h"

namespace fs = std::filesystem;

namespace fuseproof::test {
namespace {

fs::path scratch(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("corrupt_data_" + std::to_string(::getpid())) / name;
  remove_tree(p);
  fs::create_directories(p.parent_path());
  return p;
}

/// Keeps the first `bytes` bytes of `p`.
void truncate_to(const fs::path& p, uintmax_t bytes) { fs::resize_file(p, bytes); }

void copy_truncated(const fs::path& from, const fs::path& to, uintmax_t bytes) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  truncate_to(to, bytes);
}

/// End of the last PT_LOAD segment's file bytes in the ELF file at `path`.
uintmax_t loaded_end(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  uintmax_t end = 0;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(std::streamoff(eh.e_phoff + i * sizeof ph));
    in.read(reinterpret_cast<char*>(&ph), sizeof ph);
    if (ph.p_type == PT_LOAD) end = std::max<uintmax_t>(end, ph.p_offset + ph.p_filesz);
  }
  return end;
}

/// The command ended with `code` and said so in exactly one stderr line, without a final period, that contains every
/// one of `needles` (the file and what was expected).
void expect_refusal(const CommandResult& r, int code, const std::vector<std::string>& needles) {
  const auto lines = r.err_lines();
  EXPECT_EQ(r.exit_code, code) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  ASSERT_EQ(lines.size(), 1u) << "expected one stderr line, got:\n" << r.err;
  EXPECT_NE(lines[0].back(), '.') << lines[0];
  for (const std::string& n : needles) EXPECT_NE(lines[0].find(n), std::string::npos) << "'" << n << "' not in: " << lines[0];
}

// --- A plugin that is not a shared library: refused before dlopen, exit 2 (a setup error, common/exit_status.h).
TEST(Corrupt_Plugin, TruncatedSharedLibraryIsRefusedBeforeDlopen) {
  const fs::path so = scratch("libtruncated.so");
  // Cut inside the last loadable segment (a cut in trailing debug information would not be truncation to ld.so).
  copy_truncated(FUSEPROOF_CONTROL_PLUGIN, so, loaded_end(FUSEPROOF_CONTROL_PLUGIN) - 1);
  for (const std::vector<std::string> cmd :
       {std::vector<std::string>{FUSEPROOF_AUDIT_BIN, "--op", "bias_gelu_tanh", "--plugin", so.string()},
        std::vector<std::string>{FUSEPROOF_BIN, "audit", "--op", "bias_gelu_tanh", "--plugin", so.string()}}) {
    expect_refusal(run_command(cmd), 2, {so.string(), "is not a shared library", "lies outside the file"});
  }
}

TEST(Corrupt_Plugin, RelocatableObjectIsNotASharedLibrary) {
  // A relocatable object file: ELF, but not ET_DYN.
  const fs::path obj = scratch("libobject.so");
  {
    std::ifstream in(FUSEPROOF_CONTROL_PLUGIN, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes[16] = 1;  // e_type = ET_REL
    bytes[17] = 0;
    std::ofstream(obj, std::ios::binary) << bytes;
  }
  expect_refusal(run_command({FUSEPROOF_AUDIT_BIN, "--op", "bias_gelu_tanh", "--plugin", obj.string()}), 2,
                 {obj.string(), "ELF type must be ET_DYN"});
}

TEST(Corrupt_Plugin, ControlLoadsAndPasses) {
  const CommandResult r =
      run_command({FUSEPROOF_AUDIT_BIN, "--op", "bias_gelu_tanh", "--plugin", FUSEPROOF_CONTROL_PLUGIN, "--only",
                   "rejection", "--no-reference"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// --- A truncated video: exit 4, the file named and what is missing.
TEST(Corrupt_Video, TruncatedMp4AndY4mAreCorruptData) {
#ifndef FUSEPROOF_HAS_VIDEO
  GTEST_SKIP() << "this build has no `fuseproof video` (OpenCV/FFmpeg development files missing)";
#endif
  const fs::path seeds = fs::path(FUSEPROOF_SOURCE_DIR) / "fuzz" / "corpus";
  const fs::path mp4 = seeds / "fuzz_read_video_mp4" / "lossless_rgb24.mp4";
  const fs::path y4m = seeds / "fuzz_read_video_y4m" / "testsrc2_yuv444p.y4m";
  const fs::path mp4_cut = scratch("cut.mp4"), y4m_cut = scratch("cut.y4m");
  copy_truncated(mp4, mp4_cut, fs::file_size(mp4) * 3 / 4);
  copy_truncated(y4m, y4m_cut, fs::file_size(y4m) - 100);
  expect_refusal(run_command({FUSEPROOF_BIN, "video", "compare", mp4.string(), mp4_cut.string()}), 4,
                 {mp4_cut.string(), "truncated", "the 2 the container lists"});
  expect_refusal(run_command({FUSEPROOF_BIN, "video", "compare", y4m.string(), y4m_cut.string()}), 4,
                 {y4m_cut.string(), "truncated", "do not form a whole frame"});
  // Control: the intact files are identical to themselves (exit 0).
  EXPECT_EQ(run_command({FUSEPROOF_BIN, "video", "compare", mp4.string(), mp4.string()}).exit_code, 0);
  EXPECT_EQ(run_command({FUSEPROOF_BIN, "video", "compare", y4m.string(), y4m.string()}).exit_code, 0);
}

// --- An e2e golden file of another configuration, or not JSON: exit 4.
TEST(Corrupt_E2eGolden, GoldenOfAnotherConfigurationIsForeign) {
#ifndef FUSEPROOF_HAS_E2E
  GTEST_SKIP() << "this build has no `fuseproof e2e` (libtorch missing)";
#endif
  const fs::path run = scratch("e2e_run");
  const CommandResult made = run_command({FUSEPROOF_BIN, "e2e", "run", "--config", "small", "--device", "cpu",
                                          "--modes", "lossless,high,high-eager", "--formats", "rgb24", "--out",
                                          run.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const fs::path own = scratch("own_golden.json");
  ASSERT_EQ(run_command({FUSEPROOF_BIN, "e2e", "bless", "--run-dir", run.string(), "--arch", "sm_90", "--out",
                         own.string()}).exit_code, 0);
  // Control: the run's own golden passes.
  EXPECT_EQ(run_command({FUSEPROOF_BIN, "e2e", "check", "--run-dir", run.string(), "--golden", own.string()}).exit_code,
            0);
  // The committed golden is the `default` configuration's; this run is `small`.
  const std::string other = (fs::path(golden_dir()) / "e2e" / "sm_90.json").string();
  expect_refusal(run_command({FUSEPROOF_BIN, "e2e", "check", "--run-dir", run.string(), "--golden", other}), 4,
                 {other, "golden config must be the run's ('small'), got 'default'"});
  const fs::path text = scratch("not_json.json");
  std::ofstream(text) << "{ \"schema\": ";
  expect_refusal(run_command({FUSEPROOF_BIN, "e2e", "check", "--run-dir", run.string(), "--golden", text.string()}), 4,
                 {text.string(), "not valid JSON"});
}

}  // namespace
}  // namespace fuseproof::test
