// e2e_cli.cpp: argument handling and reporting for `fuseproof e2e`; the pipeline itself is in wan_pipeline.cpp.
#include "e2e_cli.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <array>

#include "frame_comparison.h"
#include "golden_check.h"
#include "run_files.h"
#include "run_manifest.h"
#include "common/atomic_file.h"
#include "common/golden_library.h"
#include "common/quoted_value.h"
#include "common/sha256.h"
#include "wan_pipeline.h"
#include "y4m_writer.h"
#ifdef FUSEPROOF_E2E_WITH_VIDEO
#include "mp4_writer.h"
#endif

#include "common/cli_exit.h"

namespace fuseproof::e2e {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& line, int code = kExitUsage) { fail_with(line, code); }

/// The non-empty items of a list CLI11 split at commas (`->delimiter(',')`).
std::vector<std::string> non_empty(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v)
    if (!s.empty()) out.push_back(s);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ",") + e;
  return s;
}

struct RunArgs {
  std::string config = "small";
  std::string device = "cpu";
  std::vector<std::string> modes{"lossless", "high", "high-eager", kLosslessAfterUnmount};
#ifdef FUSEPROOF_E2E_WITH_VIDEO
  std::vector<std::string> formats{"rgb24", "y4m", "mp4"};
#else
  std::vector<std::string> formats{"rgb24", "y4m"};
#endif
  std::string out;
  std::string dtype = "bf16";
  bool fc_out_nvfp4_input = false;
};

void run_command(const RunArgs& a) {
  PipelineConfig config;
  try {
    config = config_by_name(a.config);
  } catch (const std::exception& e) {
    fail(std::string("e2e run: --config: ") + e.what());
  }
  if (a.dtype != "bf16" && a.dtype != "fp16") fail("e2e run: --dtype must be bf16 or fp16, got '" + a.dtype + "'");
  config.dtype = a.dtype;
  config.fc_out_nvfp4_input = a.fc_out_nvfp4_input;
  if (a.device != "cpu" && a.device != "cuda") fail("e2e run: --device must be cpu or cuda, got '" + a.device + "'");
  const std::vector<std::string> modes = non_empty(a.modes);
  if (modes.empty()) fail("e2e run: --modes must name at least one mode, got '" + joined(a.modes) + "'");
  bool seen_high = false;
  for (const std::string& m : modes) {
    if (m == kLosslessAfterUnmount) {
      if (!seen_high) fail(std::string("e2e run: --modes: ") + kLosslessAfterUnmount + " must follow high, got '" +
                           joined(a.modes) + "'");
      continue;
    }
    try {
      seen_high |= parse_quality(m) == Quality::kHigh;
    } catch (const std::exception& e) {
      fail(std::string("e2e run: --modes: ") + e.what());
    }
  }
  const std::vector<std::string> formats = non_empty(a.formats);
  const std::set<std::string> format_set(formats.begin(), formats.end());
  for (const std::string& f : formats) {
#ifdef FUSEPROOF_E2E_WITH_VIDEO
    const bool known = f == "rgb24" || f == "y4m" || f == "mp4";
#else
    const bool known = f == "rgb24" || f == "y4m";
#endif
    if (!known) {
      fail("e2e run: --formats must be a list of rgb24, y4m" +
#ifdef FUSEPROOF_E2E_WITH_VIDEO
           std::string(", mp4") +
#else
           std::string(" (mp4 needs a build with FFmpeg)") +
#endif
           ", got '" + f + "'");
    }
  }
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) fail("e2e run: --out: cannot create directory '" + a.out + "': " + ec.message());

  try {
    const ComputeDevice device = a.device == "cuda" ? ComputeDevice::kCuda : ComputeDevice::kCpu;
    WanPipeline pipeline(config, device);
    nlohmann::json run = {{"schema", kRunSchema},
                          {"config", to_json(config)},
                          {"device", pipeline.device_name()},
                          {"kernel_path", device == ComputeDevice::kCuda ? "cuda" : "cpu-emulation"},
                          {"torch_version", torch_version()},
                          {"activation_dtype", config.dtype},
                          {"modes", modes},
                          {"runs", nlohmann::json::object()}};
    for (const std::string& mode : modes) {
      const bool replay = mode == kLosslessAfterUnmount;
      const std::vector<MountStatus> mounts = apply_quality(pipeline, replay ? Quality::kLossless : parse_quality(mode));
      const auto t0 = std::chrono::steady_clock::now();
      const VideoFrames frames = pipeline.run();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      nlohmann::json m = describe_frames(frames);
      m["seconds"] = seconds;
      m["mounted"] = nlohmann::json::array();
      m["rejected"] = nlohmann::json::array();
      m["fallbacks"] = nlohmann::json::array();
      for (const SiteInfo& s : pipeline.sites()) {
        if (s.mounted) m["mounted"].push_back(s.name);
        if (s.fallback_calls > 0) {
          m["fallbacks"].push_back({{"site", s.name}, {"calls", s.fallback_calls}, {"reason", s.fallback_reason}});
        }
      }
      for (const MountStatus& s : mounts) {
        if (!s.ok) m["rejected"].push_back(s.message);
      }
      if (!replay) {
        const std::string base = (fs::path(a.out) / mode).string();
        if (format_set.count("rgb24")) {
          write_rgb24(base + ".rgb24", frames);
          m["files"]["rgb24"] = mode + ".rgb24";
        }
        if (format_set.count("y4m")) {
          write_y4m(base + ".y4m", frames, config.fps);
          m["files"]["y4m"] = mode + ".y4m";
        }
#ifdef FUSEPROOF_E2E_WITH_VIDEO
        if (format_set.count("mp4")) {
          m["mp4_encoder"] = write_mp4(base + ".mp4", frames, config.fps);
          m["mp4_sha256"] = Sha256::of_file(base + ".mp4");
          m["files"]["mp4"] = mode + ".mp4";
        }
#endif
      }
      std::cout << mode << ": " << frames.count << " frames " << frames.width << "x" << frames.height << " in "
                << seconds << " s on " << pipeline.device_name() << ", " << m["mounted"].size()
                << " sites mounted, " << m["fallbacks"].size() << " with eager fallbacks, rgb24 sha256 " << m["rgb24_sha256"].get<std::string>() << '\n';
      run["runs"][mode] = m;
    }
    write_json_file((fs::path(a.out) / "run.json").string(), run);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("e2e run: ") + e.what());
  }
}

struct CheckArgs {
  std::string run_dir, golden, json, junit;
};

/// The modes `e2e check` and `bless` judge from frame files (lossless-after-unmount is a replay: no file is written).
const std::vector<std::string> kJudgedModes = {"lossless", "high", "high-eager"};
constexpr const char* kFrameFilesGate = "frame files == run.json SHA-256";

/// --run-dir's run.json, its shape checked and its paths confined (run_files.h); a refusal is one line,
/// `<command>: <why>`, with its status (2 no run.json, 4 corrupt).
nlohmann::json read_run_or_fail(const std::string& command, const std::string& run_dir) {
  try {
    return read_run_manifest(run_dir);
  } catch (const std::exception& e) {
    fail(command + ": " + e.what(), exit_status_of(e));
  }
}

/// The first gate: every frame file of the run re-hashed against run.json. When it fails no other gate is judged (their
/// hashes would describe files that are not there): incomplete when a judged mode has no rgb24 file, foreign (corrupt
/// data) when a file is missing, truncated or altered.
CheckReport frame_files_gate(const std::string& run_dir, const nlohmann::json& run) {
  CheckReport r;
  r.json["gates"] = nlohmann::json::array();
  try {
    add_gate(r, kFrameFilesGate, "PASS", verify_run_files(run_dir, run, kJudgedModes), CheckOutcome::kPass);
  } catch (const MissingDataError& e) {
    add_gate(r, kFrameFilesGate, "FAIL", e.what(), CheckOutcome::kIncomplete);
  } catch (const CorruptDataError& e) {
    add_gate(r, kFrameFilesGate, "FAIL", e.what(), CheckOutcome::kForeign);
  }
  return r;
}

/// The first failing gate of the report's outcome, for the one stderr line: its detail for the frame files' gate
/// (it names the file), else "<gate>: <detail>".
std::string first_failure(const CheckReport& r) {
  const std::string want = check_outcome_name(r.outcome);
  for (const nlohmann::json& gate : r.json.value("gates", nlohmann::json::array())) {
    if (gate.value("status", "") != "FAIL" || gate.value("outcome", "") != want) continue;
    const std::string name = gate.value("gate", ""), detail = gate.value("detail", "");
    return name == kFrameFilesGate ? detail : name + ": " + detail;
  }
  return want;
}

const char* verdict_name(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::kPass: return "PASS";
    case CheckOutcome::kMismatch: return "MISMATCH";
    case CheckOutcome::kIncomplete: return "INCOMPLETE";
    case CheckOutcome::kForeign: return "CORRUPT";
    case CheckOutcome::kError: break;
  }
  return "ERROR";
}

/// The JUnit report of a check, written atomically (a killed run leaves the previous file intact).
void write_check_junit(const CheckArgs& a, const CheckReport& r, const nlohmann::json& run) {
  if (a.junit.empty()) return;
  const std::string reproduce =
      "fuseproof-e2e check --run-dir " + a.run_dir + (a.golden.empty() ? "" : " --golden " + a.golden);
  try {
    write_file_atomically(a.junit, check_junit(r, run, a.run_dir, a.golden, reproduce));
  } catch (const std::exception& e) {
    fail(std::string("e2e check: --junit: ") + e.what());
  }
}

void check_command(const CheckArgs& a) {
  const std::string& golden_path = a.golden;
  const std::string& json_out = a.json;
  const nlohmann::json run = read_run_or_fail("e2e check", a.run_dir);
  CheckReport files = frame_files_gate(a.run_dir, run);
  nlohmann::json golden;
  const bool have_golden = !golden_path.empty();
  if (have_golden && files.outcome == CheckOutcome::kPass) {
    if (!fs::exists(golden_path)) {
      const std::string line = "no golden file '" + golden_path +
                               "' for this architecture; write one with scripts/bless_e2e.sh (docs/E2E.md)";
      // The JUnit report still shows the run's own gates, and the missing golden file as incomplete (never a pass).
      CheckReport own = check_run(run, nullptr, std::move(files));
      add_gate(own, "golden per-frame SHA-256", "FAIL", "INCOMPLETE: " + line, CheckOutcome::kNoGolden);
      write_check_junit(a, own, run);
      fail("e2e check: --golden: " + line, static_cast<int>(CheckOutcome::kNoGolden));
    }
    try {
      golden = read_json_file(golden_path);
    } catch (const std::exception& e) {
      fail(std::string("e2e check: --golden: ") + e.what(), static_cast<int>(CheckOutcome::kForeign));
    }
  }
  // Frame files that are not what run.json records: no other gate is judged.
  const CheckReport r =
      files.outcome == CheckOutcome::kPass ? check_run(run, have_golden ? &golden : nullptr, std::move(files)) : files;
  for (const std::string& l : r.lines) std::cout << l << '\n';
  write_check_junit(a, r, run);
  const int code = static_cast<int>(r.outcome);
  std::cout << "e2e check: " << verdict_name(r.outcome) << '\n';
  if (!json_out.empty()) {
    nlohmann::json j = r.json;
    j["exit_status"] = code;
    j["golden"] = golden_path;
    try {
      write_json_file(json_out, j);
    } catch (const std::exception& e) {
      fail(std::string("e2e check: --json: ") + e.what());
    }
  }
  if (code == 0) return;
  // One line on stderr: the failing gate, and for corrupt or foreign data the file it is in.
  std::string where;
  if (r.outcome == CheckOutcome::kForeign && r.json["gates"][0].value("status", "") == "PASS")
    where = have_golden ? "--golden '" + golden_path + "': " : "--run-dir '" + a.run_dir + "': ";
  if (r.outcome == CheckOutcome::kError) where = "--run-dir '" + a.run_dir + "': ";
  if (r.outcome == CheckOutcome::kMismatch) where = "MISMATCH: ";
  fail("e2e check: " + where + first_failure(r), code);
}

void bless_command(const std::string& run_dir, const std::string& arch, const std::string& out,
                   const std::string& comparison_path, const std::string& provenance_path,
                   const std::string& high_comparison_path) {
  require_arch_name(arch);  // the CLI checks it too; a golden file never records another name
  const nlohmann::json run = read_run_or_fail("e2e bless", run_dir);
  try {
    // The run's own gates, on frame files re-hashed first: a run whose files are not what run.json says is never
    // blessed, and nothing is written.
    CheckReport files = frame_files_gate(run_dir, run);
    const CheckReport self = files.outcome == CheckOutcome::kPass ? check_run(run, nullptr, std::move(files)) : files;
    for (const std::string& l : self.lines) std::cout << l << '\n';
    if (self.outcome != CheckOutcome::kPass) {
      fail("e2e bless: refusing to bless '" + run_dir + "', its own gates fail: " + first_failure(self),
           static_cast<int>(self.outcome));
    }
    const nlohmann::json comparison = comparison_path.empty() ? nlohmann::json() : read_json_file(comparison_path);
    const nlohmann::json provenance = provenance_path.empty() ? nlohmann::json() : read_json_file(provenance_path);
    const nlohmann::json high_comparison =
        high_comparison_path.empty() ? nlohmann::json() : read_json_file(high_comparison_path);
    write_json_file(out, make_golden(run, arch, comparison, high_comparison, provenance));
    std::cout << "e2e bless: wrote " << out << '\n';
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("e2e bless: ") + e.what(), exit_status_of(e));
  }
}

struct CompareArgs {
  std::string run_dir, baseline = "high", candidate = "high-eager", json, markdown_file;
};

/// Two modes of a run directory compared from their RGB24 frames (as gbrp planes): the same measurement as
/// `fuseproof video compare` on lossless MP4s of them, without FFmpeg (for the GPU machine). Each mode's frame file is
/// re-hashed against run.json first.
void compare_command(const CompareArgs& a) {
  if (a.baseline == a.candidate)
    fail("e2e compare: --candidate must name another mode than --baseline, got " + quoted_value(a.candidate) + " for both");
  const nlohmann::json run = read_run_or_fail("e2e compare", a.run_dir);
  try {
    const auto frames_of = [&](const std::string& mode) {
      if (!run["runs"].contains(mode)) throw UsageError("run.json has no mode " + quoted_value(mode));
      const nlohmann::json& m = run["runs"][mode];
      if (!run_file(a.run_dir, run, mode, "rgb24"))
        throw UsageError("mode '" + mode + "' has no rgb24 frames in the run directory");
      const std::string raw = verify_mode_frames(a.run_dir, run, mode);
      const VideoFrames f = read_rgb24(raw, m["width"].get<int>(), m["height"].get<int>(), m["frames"].get<int>());
      // Read a second time: the file must still be the one just verified.
      if (Sha256::of(f.rgb.data(), f.rgb.size()) != m["rgb24_sha256"].get<std::string>())
        throw CorruptDataError("'" + raw + "' changed while it was read: it no longer matches rgb24_sha256 in run.json");
      return f;
    };
    const VideoFrames base = frames_of(a.baseline), cand = frames_of(a.candidate);
    VideoComparison c = compare_planar(gbrp_from_rgb24(base), gbrp_from_rgb24(cand));
    c.baseline = a.baseline + ".rgb24";
    c.candidate = a.candidate + ".rgb24";
    c.pixel_format_baseline = c.pixel_format_candidate = "rgb24";
    c.conversion = "rgb24 -> gbrp (repacking, both)";
    c.container_sha_baseline = run["runs"][a.baseline].at("rgb24_sha256").get<std::string>();
    c.container_sha_candidate = run["runs"][a.candidate].at("rgb24_sha256").get<std::string>();
    c.container_equal = c.container_sha_baseline == c.container_sha_candidate;
    std::cout << to_terminal(c);
    if (!a.json.empty()) write_json_file(a.json, to_json(c));
    if (!a.markdown_file.empty()) {
      try {
        write_file_atomically(a.markdown_file, to_markdown(c));
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("--markdown-file: ") + e.what());
      }
    }
    if (!c.frames_identical) fail("e2e compare: " + difference_line(c), kExitFail);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("e2e compare: ") + e.what(), exit_status_of(e));
  }
}

void sites_command(const std::string& config_name, const std::string& mode, bool fc_out_nvfp4_input) {
  try {
    PipelineConfig config = config_by_name(config_name);
    config.fc_out_nvfp4_input = fc_out_nvfp4_input;
    WanPipeline p(config, ComputeDevice::kCpu);
    apply_quality(p, parse_quality(mode));
    for (const SiteInfo& s : p.sites()) {
      std::string why;
      if (!s.mounted) {
        // Ask the pipeline: a rejection says why; an accepted probe is undone (the mode leaves the site eager).
        const MountStatus probe = p.mount(s.name);
        why = probe.ok ? "eligible; " + mode + " leaves it eager" : probe.message;
        if (probe.ok) p.unmount(s.name);
      }
      const std::string how = !s.dit_op.empty()         ? "fused " + s.dit_op
                              : s.fc_out_nvfp4_input ? "fc_in skip_bias_add, fused NVFP4 quantization of fc_out's input"
                                                     : "fc_in skip_bias_add";
      std::cout << s.name << ": " << (s.mounted ? "mounted (" + how + ")" : "eager (" + why + ")") << '\n';
    }
  } catch (const std::exception& e) {
    fail(std::string("e2e sites: ") + e.what());
  }
}

}  // namespace

void add_e2e_commands(CLI::App& app) {
  auto run_args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run the pipeline in one or more quality modes; writes DIR/run.json and frames");
  run->add_option("--config", run_args->config, "small (CI, CPU) or default (320x192, GPU); small-dit, default-dit: their blocks modulate and gate their "
                  "residuals in the activation dtype (fusion sites blocks.<i>.{modulate,gate}_{attn,ffn})")->capture_default_str();
  run->add_option("--device", run_args->device, "cpu or cuda")->capture_default_str();
  run->add_option("--modes", run_args->modes, "comma list of lossless, high, high-eager, lossless-after-unmount")
      ->delimiter(',')
      ->capture_default_str();
  run->add_option("--formats", run_args->formats, "comma list of rgb24, y4m, mp4")->delimiter(',')->capture_default_str();
  run->add_option("--out", run_args->out, "output directory")->required();
  run->add_option("--dtype", run_args->dtype, "activation dtype: bf16 or fp16")->capture_default_str();
  run->add_flag("--fc-out-nvfp4-input", run_args->fc_out_nvfp4_input,
                "FFN fc_out takes NVFP4 activations (static global scale 128); high fuses bias + GELU + NVFP4 "
                "quantization into one call, high-eager runs eager bias + GELU then nvfp4_quant");
  run->callback([run_args] { run_command(*run_args); });

  auto check_args = std::make_shared<CheckArgs>();
  CLI::App* check = app.add_subcommand("check", "Gate a run directory (and its golden file): 0 pass, 1 mismatch, 2 error, 3 no golden");
  check->add_option("--run-dir", check_args->run_dir, "directory written by e2e run")->required();
  check->add_option("--golden", check_args->golden, "golden/e2e/<arch>.json; omitted: only the run's own gates");
  check->add_option("--json", check_args->json, "write the gate results as JSON")->check(output_file_option());
  check->add_option("--junit", check_args->junit, "write the gate results as JUnit XML: a testcase per gate")->check(output_file_option());
  check->callback([check_args] {
    const OutputClaims claims = claim_output_paths({{"--json", check_args->json}, {"--junit", check_args->junit}});
    check_command(*check_args);
  });

  auto bless_args = std::make_shared<std::array<std::string, 6>>();
  CLI::App* bless = app.add_subcommand("bless", "Write a golden file from a run directory whose own gates pass");
  bless->add_option("--run-dir", (*bless_args)[0], "directory written by e2e run")->required();
  bless->add_option("--arch", (*bless_args)[1], "architecture name, sm_<digits>, e.g. sm_90")
      ->required()
      ->check([](const std::string& arch) { return arch_name_error(arch); });
  bless->add_option("--out", (*bless_args)[2], "golden file to write, e.g. golden/e2e/sm_90.json")->required()->check(output_file_option());
  bless->add_option("--comparison", (*bless_args)[3], "lossless-vs-high JSON from `fuseproof video compare --json`");
  bless->add_option("--provenance", (*bless_args)[4], "provenance JSON (GPU, driver, CUDA, torch, commit, command, date)");
  bless->add_option("--high-comparison", (*bless_args)[5],
                    "high-vs-high-eager JSON from `fuseproof-e2e compare` or `fuseproof video compare --json`");
  bless->callback([bless_args] {
    const auto& b = *bless_args;
    bless_command(b[0], b[1], b[2], b[3], b[4], b[5]);
  });

  auto compare_args = std::make_shared<CompareArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare two modes' RGB24 frames of a run directory: SHA-256, PSNR and SSIM per plane and All as "
                 "FFmpeg computes them (0 identical, 1 different, 2 error)");
  compare->add_option("--run-dir", compare_args->run_dir, "directory written by e2e run")->required();
  compare->add_option("--baseline", compare_args->baseline, "mode")->capture_default_str();
  compare->add_option("--candidate", compare_args->candidate, "mode")->capture_default_str();
  compare->add_option("--json", compare_args->json, "write the report, per frame, as JSON")->check(output_file_option());
  compare->add_option("--markdown-file", compare_args->markdown_file, "write the Markdown table to this file")->check(output_file_option());
  compare->callback([compare_args] {
    const OutputClaims claims =
        claim_output_paths({{"--json", compare_args->json}, {"--markdown-file", compare_args->markdown_file}});
    compare_command(*compare_args);
  });

  auto sites_args = std::make_shared<std::array<std::string, 2>>(std::array<std::string, 2>{"small", "high"});
  auto sites_fp4 = std::make_shared<bool>(false);
  CLI::App* sites = app.add_subcommand("sites", "List the fusion sites and why each is mounted or eager");
  sites->add_option("--config", (*sites_args)[0], "small, default, small-dit or default-dit")->capture_default_str();
  sites->add_option("--mode", (*sites_args)[1], "lossless, high or high-eager")->capture_default_str();
  sites->add_flag("--fc-out-nvfp4-input", *sites_fp4, "FFN fc_out takes NVFP4 activations (as `run`)");
  sites->callback([sites_args, sites_fp4] { sites_command((*sites_args)[0], (*sites_args)[1], *sites_fp4); });
}

void add_e2e_subcommand(CLI::App& app) {
  CLI::App* e2e = app.add_subcommand("e2e", "End-to-end Wan-style pipeline: run, check against golden, bless");
  e2e->require_subcommand(1);
  add_e2e_commands(*e2e);
}

}  // namespace fuseproof::e2e
