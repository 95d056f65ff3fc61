// e2e_cli.cpp: argument handling and reporting for `fuseproof e2e`; the pipeline itself is in wan_pipeline.cpp.
#include "e2e_cli.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <array>

#include "golden_check.h"
#include "run_manifest.h"
#include "sha256.h"
#include "wan_pipeline.h"
#include "y4m_writer.h"
#ifdef FUSEPROOF_E2E_WITH_VIDEO
#include "mp4_writer.h"
#endif

namespace fuseproof::e2e {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& line, int code = 2) {
  std::cerr << line << '\n';
  throw CLI::RuntimeError(code);
}

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct RunArgs {
  std::string config = "small";
  std::string device = "cpu";
  std::string modes = std::string("lossless,high,high-eager,") + kLosslessAfterUnmount;
#ifdef FUSEPROOF_E2E_WITH_VIDEO
  std::string formats = "rgb24,y4m,mp4";
#else
  std::string formats = "rgb24,y4m";
#endif
  std::string out;
};

void run_command(const RunArgs& a) {
  PipelineConfig config;
  try {
    config = config_by_name(a.config);
  } catch (const std::exception& e) {
    fail(std::string("e2e run: --config: ") + e.what());
  }
  if (a.device != "cpu" && a.device != "cuda") fail("e2e run: --device must be cpu or cuda, got '" + a.device + "'");
  const std::vector<std::string> modes = split_csv(a.modes);
  if (modes.empty()) fail("e2e run: --modes must name at least one mode, got '" + a.modes + "'");
  bool seen_high = false;
  for (const std::string& m : modes) {
    if (m == kLosslessAfterUnmount) {
      if (!seen_high) fail(std::string("e2e run: --modes: ") + kLosslessAfterUnmount + " must follow high, got '" +
                           a.modes + "'");
      continue;
    }
    try {
      seen_high |= parse_quality(m) == Quality::kHigh;
    } catch (const std::exception& e) {
      fail(std::string("e2e run: --modes: ") + e.what());
    }
  }
  const std::vector<std::string> formats = split_csv(a.formats);
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
      for (const SiteInfo& s : pipeline.sites()) {
        if (s.mounted) m["mounted"].push_back(s.name);
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
          m["mp4_sha256"] = sha256_file_hex(base + ".mp4");
          m["files"]["mp4"] = mode + ".mp4";
        }
#endif
      }
      std::cout << mode << ": " << frames.count << " frames " << frames.width << "x" << frames.height << " in "
                << seconds << " s on " << pipeline.device_name() << ", " << m["mounted"].size()
                << " sites mounted, rgb24 sha256 " << m["rgb24_sha256"].get<std::string>() << '\n';
      run["runs"][mode] = m;
    }
    write_json_file((fs::path(a.out) / "run.json").string(), run);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("e2e run: ") + e.what());
  }
}

void check_command(const std::string& run_dir, const std::string& golden_path, const std::string& json_out) {
  nlohmann::json run, golden;
  try {
    run = read_json_file((fs::path(run_dir) / "run.json").string());
  } catch (const std::exception& e) {
    fail(std::string("e2e check: --run-dir: ") + e.what());
  }
  const bool have_golden = !golden_path.empty();
  if (have_golden) {
    if (!fs::exists(golden_path)) {
      fail("e2e check: --golden: no golden file '" + golden_path +
               "' for this architecture; write one with scripts/bless_e2e.sh (docs/E2E.md)",
           static_cast<int>(CheckOutcome::kNoGolden));
    }
    try {
      golden = read_json_file(golden_path);
    } catch (const std::exception& e) {
      fail(std::string("e2e check: --golden: ") + e.what(), static_cast<int>(CheckOutcome::kForeign));
    }
  }
  const CheckReport r = check_run(run, have_golden ? &golden : nullptr);
  for (const std::string& l : r.lines) std::cout << l << '\n';
  const int code = static_cast<int>(r.outcome);
  std::cout << (code == 0 ? "e2e check: PASS" : code == 1 ? "e2e check: MISMATCH" : "e2e check: ERROR") << '\n';
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
  if (r.outcome == CheckOutcome::kForeign) {
    for (const auto& gate : r.json["gates"])
      if (gate["status"] == "FAIL")
        std::cerr << "e2e check: --golden '" << golden_path << "': " << gate["detail"].get<std::string>() << '\n';
  }
  if (code != 0) throw CLI::RuntimeError(code);
}

void bless_command(const std::string& run_dir, const std::string& arch, const std::string& out,
                   const std::string& comparison_path, const std::string& provenance_path) {
  try {
    const nlohmann::json run = read_json_file((fs::path(run_dir) / "run.json").string());
    const CheckReport self = check_run(run, nullptr);
    for (const std::string& l : self.lines) std::cout << l << '\n';
    if (self.outcome != CheckOutcome::kPass) {
      fail("e2e bless: the run's own gates fail; refusing to bless it", static_cast<int>(self.outcome));
    }
    const nlohmann::json comparison = comparison_path.empty() ? nlohmann::json() : read_json_file(comparison_path);
    const nlohmann::json provenance = provenance_path.empty() ? nlohmann::json() : read_json_file(provenance_path);
    write_json_file(out, make_golden(run, arch, comparison, provenance));
    std::cout << "e2e bless: wrote " << out << '\n';
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("e2e bless: ") + e.what());
  }
}

void sites_command(const std::string& config_name, const std::string& mode) {
  try {
    WanPipeline p(config_by_name(config_name), ComputeDevice::kCpu);
    apply_quality(p, parse_quality(mode));
    for (const SiteInfo& s : p.sites()) {
      std::string why;
      if (!s.mounted) {
        // Ask the pipeline: a rejection says why; an accepted probe is undone (the mode leaves the site eager).
        const MountStatus probe = p.mount(s.name);
        why = probe.ok ? "eligible; " + mode + " leaves it eager" : probe.message;
        if (probe.ok) p.unmount(s.name);
      }
      std::cout << s.name << ": " << (s.mounted ? "mounted" : "eager (" + why + ")") << '\n';
    }
  } catch (const std::exception& e) {
    fail(std::string("e2e sites: ") + e.what());
  }
}

}  // namespace

void add_e2e_commands(CLI::App& app) {
  auto run_args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run the pipeline in one or more quality modes; writes DIR/run.json and frames");
  run->add_option("--config", run_args->config, "small (CI, CPU) or default (320x192, GPU)")->capture_default_str();
  run->add_option("--device", run_args->device, "cpu or cuda")->capture_default_str();
  run->add_option("--modes", run_args->modes, "comma list of lossless, high, high-eager, lossless-after-unmount")
      ->capture_default_str();
  run->add_option("--formats", run_args->formats, "comma list of rgb24, y4m, mp4")->capture_default_str();
  run->add_option("--out", run_args->out, "output directory")->required();
  run->callback([run_args] { run_command(*run_args); });

  auto check_args = std::make_shared<std::array<std::string, 3>>();
  CLI::App* check = app.add_subcommand("check", "Gate a run directory (and its golden file): 0 pass, 1 mismatch, 2 error, 3 no golden");
  check->add_option("--run-dir", (*check_args)[0], "directory written by e2e run")->required();
  check->add_option("--golden", (*check_args)[1], "golden/e2e/<arch>.json; omitted: only the run's own gates");
  check->add_option("--json", (*check_args)[2], "write the gate results as JSON");
  check->callback([check_args] { check_command((*check_args)[0], (*check_args)[1], (*check_args)[2]); });

  auto bless_args = std::make_shared<std::array<std::string, 5>>();
  CLI::App* bless = app.add_subcommand("bless", "Write a golden file from a run directory whose own gates pass");
  bless->add_option("--run-dir", (*bless_args)[0], "directory written by e2e run")->required();
  bless->add_option("--arch", (*bless_args)[1], "architecture name, e.g. sm_90")->required();
  bless->add_option("--out", (*bless_args)[2], "golden file to write, e.g. golden/e2e/sm_90.json")->required();
  bless->add_option("--comparison", (*bless_args)[3], "lossless-vs-high JSON from `fuseproof video compare --json`");
  bless->add_option("--provenance", (*bless_args)[4], "provenance JSON (GPU, driver, CUDA, torch, command, date)");
  bless->callback([bless_args] {
    const auto& b = *bless_args;
    bless_command(b[0], b[1], b[2], b[3], b[4]);
  });

  auto sites_args = std::make_shared<std::array<std::string, 2>>(std::array<std::string, 2>{"small", "high"});
  CLI::App* sites = app.add_subcommand("sites", "List the fusion sites and why each is mounted or eager");
  sites->add_option("--config", (*sites_args)[0], "small or default")->capture_default_str();
  sites->add_option("--mode", (*sites_args)[1], "lossless, high or high-eager")->capture_default_str();
  sites->callback([sites_args] { sites_command((*sites_args)[0], (*sites_args)[1]); });
}

void add_e2e_subcommand(CLI::App& app) {
  CLI::App* e2e = app.add_subcommand("e2e", "End-to-end Wan-style pipeline: run, check against golden, bless");
  e2e->require_subcommand(1);
  add_e2e_commands(*e2e);
}

}  // namespace fuseproof::e2e
