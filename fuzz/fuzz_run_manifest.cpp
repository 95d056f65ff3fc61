// fuzz_run_manifest.cpp: a run directory's run.json (e2e/run_files.h) on mutated manifests, in a run directory that
// holds one real frame file, a symlink to it, a symlink out of the run to a copy of it, and a sibling folder whose name
// extends the run's. Every input is accepted or refused with a UsageError, MissingDataError or CorruptDataError of
// one line; an accepted manifest names only files inside the run, and its frame files are re-hashed (accepted only
// when they are what it records); the gates of `e2e check` then run on it. Never a crash, never a path outside.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/exit_status.h"
#include "golden_check.h"
#include "run_files.h"

namespace {

namespace fs = std::filesystem;

std::string g_run;     // <tmp>/run: run.json is the input
std::string g_canon;   // its canonical form

void one_line(const std::exception& e) {
  const std::string m = e.what();
  if (m.empty() || m.find('\n') != std::string::npos || m.back() == '.') __builtin_trap();
}

void write(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
}

/// Whether `p` (canonical) lies strictly below the run directory, component by component.
bool inside_run(const std::string& p) {
  const fs::path base(g_canon), full(p);
  auto q = full.begin();
  for (const fs::path& part : base) {
    if (part.empty()) continue;
    if (q == full.end() || *q != part) return false;
    ++q;
  }
  return q != full.end();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/fuzz_run_manifest.XXXXXX";
  if (!::mkdtemp(tmpl)) __builtin_trap();
  const std::string top = tmpl;
  g_run = top + "/run";
  if (::mkdir(g_run.c_str(), 0755) != 0 || ::mkdir((top + "/run2").c_str(), 0755) != 0) __builtin_trap();
  // One 4x2 rgb24 frame, bytes 0..23 (the seeds record its SHA-256), and the same bytes outside the run.
  unsigned char frame[24];
  for (int i = 0; i < 24; ++i) frame[i] = static_cast<unsigned char>(i);
  write(g_run + "/a.rgb24", frame, sizeof frame);
  write(top + "/run2/a.rgb24", frame, sizeof frame);
  if (::symlink("a.rgb24", (g_run + "/inside.rgb24").c_str()) != 0) __builtin_trap();
  if (::symlink("../run2/a.rgb24", (g_run + "/escape.rgb24").c_str()) != 0) __builtin_trap();
  g_canon = fs::canonical(g_run).string();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fuseproof;
  write(g_run + "/run.json", data, size);
  nlohmann::json run;
  try {
    run = e2e::read_run_manifest(g_run);
  } catch (const UsageError& e) {
    one_line(e);
    return 0;
  } catch (const MissingDataError& e) {
    one_line(e);
    return 0;
  } catch (const CorruptDataError& e) {
    one_line(e);
    return 0;
  }
  // Accepted: every file it names resolves inside the run (the symlink out never does).
  for (const auto& [mode, m] : run["runs"].items()) {
    if (!e2e::is_mode_name(mode)) __builtin_trap();
    if (!m.contains("files")) continue;
    for (const auto& [kind, path] : m["files"].items()) {
      const auto p = e2e::run_file(g_run, run, mode, kind);
      if (!p || !inside_run(*p)) __builtin_trap();
    }
  }
  bool verified = false;
  try {
    (void)e2e::verify_run_files(g_run, run, {"lossless", "high", "high-eager"});
    verified = true;
  } catch (const MissingDataError& e) {
    one_line(e);
  } catch (const CorruptDataError& e) {
    one_line(e);
  }
  if (verified) {
    const e2e::CheckReport r = e2e::check_run(run, nullptr);
    (void)r;
  }
  return 0;
}
