// golden_check.cpp: frame-hash gates (TestFloat-style failure lines: first few, then the total) and golden assembly.
#include "golden_check.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "common/junit_xml.h"
#include "run_manifest.h"

namespace fuseproof::e2e {
namespace {

constexpr int kMaxFailureLines = 5;

/// Which failure wins when several gates fail: an error, then a mismatch, then missing evidence (incomplete).
int rank(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::kPass: return 0;
    case CheckOutcome::kIncomplete: return 1;
    case CheckOutcome::kMismatch: return 2;
    case CheckOutcome::kError: return 3;
    case CheckOutcome::kForeign: return 4;  // corrupt input: nothing else it says can be trusted
  }
  return 3;
}

}  // namespace

const char* check_outcome_name(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::kPass: return "pass";
    case CheckOutcome::kMismatch: return "mismatch";
    case CheckOutcome::kError: return "error";
    case CheckOutcome::kIncomplete: return "incomplete";
    case CheckOutcome::kForeign: return "foreign";
  }
  return "error";
}

namespace {

struct Gate {
  CheckReport& report;
  void add(const std::string& name, const std::string& status, const std::string& detail, CheckOutcome fail_as) {
    add_gate(report, name, status, detail, fail_as);
  }
};

const nlohmann::json* mode_of(const nlohmann::json& run, const std::string& mode) {
  if (!run.contains("runs") || !run["runs"].contains(mode)) return nullptr;
  return &run["runs"][mode];
}

/// "" when `d` is a frame description: integer "frames", "width", "height" and a "frame_sha256" of one string per
/// frame; else what is wrong with it. A list of another length is corrupt data, never a mismatch.
std::string malformed(const nlohmann::json& d, const std::string& name) {
  if (!d.is_object()) return name + " must be an object of frames, width, height, frame_sha256";
  for (const char* key : {"frames", "width", "height"})
    if (!d.contains(key) || !d[key].is_number_integer()) return name + "." + key + " must be an integer";
  const auto& h = d.value("frame_sha256", nlohmann::json());
  if (!h.is_array() || !std::all_of(h.begin(), h.end(), [](const nlohmann::json& e) { return e.is_string(); }))
    return name + ".frame_sha256 must be a list of SHA-256 strings";
  if (int64_t(h.size()) != d["frames"].get<int64_t>())
    return name + ".frame_sha256 lists " + std::to_string(h.size()) + " hashes for " + d["frames"].dump() + " frames";
  return "";
}

struct FrameDiff {
  std::string detail;  ///< "" when identical
  CheckOutcome fail_as = CheckOutcome::kMismatch;
};

/// Compares two frame descriptions: "" when identical, else the count and the first differing frames (a mismatch),
/// or what makes either one malformed (foreign data).
FrameDiff diff_frames(const nlohmann::json& a, const nlohmann::json& b, const std::string& a_name,
                      const std::string& b_name) {
  for (const auto& [d, name] : {std::pair{&a, &a_name}, std::pair{&b, &b_name}}) {
    const std::string why = malformed(*d, *name);
    if (!why.empty()) return {why, CheckOutcome::kForeign};
  }
  for (const char* key : {"frames", "width", "height"}) {
    if (a.at(key) != b.at(key)) {
      return {std::string(key) + " differ: " + a_name + " " + a.at(key).dump() + ", " + b_name + " " + b.at(key).dump()};
    }
  }
  const auto& ha = a.at("frame_sha256");
  const auto& hb = b.at("frame_sha256");
  std::string out;
  int bad = 0;
  for (size_t i = 0; i < ha.size(); ++i) {
    if (ha[i] == hb[i]) continue;
    if (bad < kMaxFailureLines) {
      out += (bad ? "; " : "") + std::string("frame ") + std::to_string(i) + " " + ha[i].get<std::string>().substr(0, 16) +
             " vs " + hb[i].get<std::string>().substr(0, 16);
    }
    ++bad;
  }
  if (bad == 0) return {};
  return {std::to_string(bad) + " of " + std::to_string(ha.size()) + " frames differ (" + out +
          (bad > kMaxFailureLines ? "; ..." : "") + ")"};
}

/// Adds the gate of one frame-description comparison: PASS with `same` when identical.
void frame_gate(Gate& g, const std::string& name, const FrameDiff& d, const std::string& same) {
  g.add(name, d.detail.empty() ? "PASS" : "FAIL", d.detail.empty() ? same : d.detail, d.fail_as);
}

}  // namespace

void add_gate(CheckReport& r, const std::string& name, const std::string& status, const std::string& detail,
              CheckOutcome fail_as) {
  r.lines.push_back(status + " " + name + (detail.empty() ? "" : ": " + detail));
  nlohmann::json gate = {{"gate", name}, {"status", status}, {"detail", detail}};
  if (status == "FAIL") gate["outcome"] = check_outcome_name(fail_as);
  r.json["gates"].push_back(gate);
  if (status == "FAIL" && rank(fail_as) > rank(r.outcome)) r.outcome = fail_as;
}

std::string check_junit(const CheckReport& r, const nlohmann::json& run, const std::string& run_dir,
                        const std::string& golden_path, const std::string& reproduce) {
  junit::TestSuite suite;
  const nlohmann::json config = run.value("config", nlohmann::json::object());
  const std::string config_name = config.is_object() ? config.value("name", std::string("unknown")) : "unknown";
  const std::string dtype = run.value("activation_dtype", std::string("bf16"));
  suite.name = "fuseproof.e2e." + config_name + "." + dtype;
  suite.properties = {{"run_dir", run_dir},
                      {"golden", golden_path.empty() ? std::string("none (the run's own gates only)") : golden_path},
                      {"config", config_name},
                      {"dtype", dtype},
                      {"device", run.value("device", std::string())},
                      {"kernel", run.value("kernel_path", std::string())},
                      {"torch", run.value("torch_version", std::string())},
                      {"outcome", check_outcome_name(r.outcome)}};
  for (const nlohmann::json& gate : r.json.value("gates", nlohmann::json::array())) {
    const std::string name = gate.value("gate", std::string());
    const std::string status = gate.value("status", std::string());
    const std::string detail = gate.value("detail", std::string());
    suite.cases.push_back(status == "FAIL"   ? junit::failed_case(suite.name, name,
                                                                  gate.value("outcome", std::string("mismatch")),
                                                                  detail, detail + "\nReproduce: " + reproduce)
                          : status == "SKIP" ? junit::skipped_case(suite.name, name, detail)
                                             : junit::passed_case(suite.name, name, detail));
  }
  return junit::to_xml({suite});
}

CheckReport check_run(const nlohmann::json& run, const nlohmann::json* golden, CheckReport prior) {
  CheckReport r = std::move(prior);
  if (!r.json.contains("gates")) r.json["gates"] = nlohmann::json::array();
  Gate g{r};
  const nlohmann::json* lossless = nullptr;
  const nlohmann::json* high = nullptr;
  try {
    lossless = mode_of(run, "lossless");
    high = mode_of(run, "high");
    const nlohmann::json* high_eager = mode_of(run, "high-eager");
    const nlohmann::json* remount = mode_of(run, kLosslessAfterUnmount);
    if (!lossless || !high || !high_eager) {
      g.add("run", "FAIL", "run.json must hold modes lossless, high and high-eager", CheckOutcome::kError);
      return r;
    }
    const nlohmann::json fallbacks = high->value("fallbacks", nlohmann::json::array());
    if (fallbacks.empty()) {
      g.add("high ran the fused op at every mounted site", "PASS",
            std::to_string(high->value("mounted", nlohmann::json::array()).size()) + " sites, no eager fallback",
            CheckOutcome::kPass);
    } else {
      g.add("high ran the fused op at every mounted site", "FAIL",
            "INCOMPLETE: eager fallback at " + fallbacks.dump() + "; high == high-eager does not test the kernel there",
            CheckOutcome::kIncomplete);
    }
    FrameDiff d = diff_frames(*high, *high_eager, "high", "high-eager");
    // A dit_ops config also fuses its blocks' modulate and gated residual, a fc_out_nvfp4_input one the NVFP4
    // quantization of fc_out's input with bias + GELU; the old gate names stay for the others.
    const nlohmann::json config = run.value("config", nlohmann::json::object());
    const bool dit_ops = config.value("dit_ops", false);
    const std::string gelu = config.value("fc_out_nvfp4_input", false) ? "bias+GELU+NVFP4 quantization" : "bias+GELU";
    frame_gate(g,
               dit_ops ? "high == high-eager (fused " + gelu + ", modulate, gated residual are lossless)"
                       : "high == high-eager (fused " + gelu + " is lossless)",
               d, d.detail.empty() ? std::to_string(high->at("frames").get<int>()) + " frames bit-identical" : "");
    if (remount) {
      frame_gate(g, "mount -> run -> unmount -> run == lossless",
                 diff_frames(*lossless, *remount, "lossless", kLosslessAfterUnmount), "bit-identical");
    } else {
      g.add("mount -> run -> unmount -> run == lossless", "SKIP", "mode lossless-after-unmount not run",
            CheckOutcome::kPass);
    }
    d = diff_frames(*lossless, *high, "lossless", "high");
    if (d.fail_as == CheckOutcome::kForeign) {
      frame_gate(g, "lossless != high (negative control)", d, "");
    } else {
      g.add("lossless != high (negative control)", d.detail.empty() ? "FAIL" : "PASS",
            d.detail.empty() ? "lossless and high are bit-identical: NVFP4 had no effect, so the identity gate cannot fail"
                             : d.detail,
            CheckOutcome::kMismatch);
    }
  } catch (const nlohmann::json::exception& e) {
    g.add("manifest", "FAIL", std::string("malformed run JSON: ") + e.what(), CheckOutcome::kError);
    return r;
  }
  if (golden == nullptr) return r;
  // Everything below reads the golden file: what is malformed there is corrupt or foreign data (exit 4).
  try {
    if (golden->value("schema", "") != kGoldenSchema) {
      g.add("golden", "FAIL", std::string("schema must be ") + kGoldenSchema + ", got '" + golden->value("schema", "") +
                                  "'", CheckOutcome::kForeign);
      return r;
    }
    if (golden->at("config") != run.at("config")) {
      g.add("config", "FAIL",
            "golden config must be the run's ('" + run.at("config").value("name", "") + "'), got '" +
                golden->at("config").value("name", "") + "' (" + golden->at("config").dump() + ")",
            CheckOutcome::kForeign);
      return r;
    }
    frame_gate(g, "high per-frame SHA-256 == golden", diff_frames(golden->at("high"), *high, "golden high", "run high"),
               "all frames");
    if (golden->contains("lossless")) {
      frame_gate(g, "lossless per-frame SHA-256 == golden",
                 diff_frames(golden->at("lossless"), *lossless, "golden lossless", "run lossless"), "all frames");
    }
    const auto& gh = golden->at("high");
    if (gh.contains("mp4_sha256") && high->contains("mp4_sha256") &&
        gh.value("mp4_encoder", "") == high->value("mp4_encoder", "")) {
      const bool same = gh["mp4_sha256"] == high->at("mp4_sha256");
      g.add("high MP4 SHA-256 == golden", same ? "PASS" : "FAIL",
            same ? gh["mp4_sha256"].get<std::string>()
                 : gh["mp4_sha256"].get<std::string>() + " vs " + high->at("mp4_sha256").get<std::string>(),
            CheckOutcome::kMismatch);
    } else {
      g.add("high MP4 SHA-256 == golden", "SKIP",
            "needs an MP4 from the same encoder build (" + gh.value("mp4_encoder", std::string("none")) +
                "); per-frame RGB24 hashes are the identity gate",
            CheckOutcome::kPass);
    }
  } catch (const nlohmann::json::exception& e) {
    g.add("golden", "FAIL", std::string("malformed golden JSON: ") + e.what(), CheckOutcome::kForeign);
  }
  return r;
}

nlohmann::json make_golden(const nlohmann::json& run, const std::string& arch, const nlohmann::json& comparison,
                           const nlohmann::json& high_comparison, const nlohmann::json& provenance) {
  const nlohmann::json* high = mode_of(run, "high");
  const nlohmann::json* lossless = mode_of(run, "lossless");
  if (!high || !lossless) throw std::runtime_error("bless: run.json must hold modes lossless and high");
  const auto identity = [](const nlohmann::json& m) {
    nlohmann::json j;
    for (const char* k : {"frames", "width", "height", "rgb24_sha256", "frame_sha256", "mp4_sha256", "mp4_encoder"}) {
      if (m.contains(k)) j[k] = m[k];
    }
    return j;
  };
  // The summary of a comparison report: identity, formats and every flat PSNR/SSIM/LPIPS figure, no per-frame list.
  const auto summary = [](const nlohmann::json& c) {
    nlohmann::json j;
    for (const auto& [k, v] : c.items()) {
      if (k == "per_frame") continue;
      if (k.rfind("psnr_", 0) == 0 || k.rfind("ssim_", 0) == 0 || k.rfind("lpips", 0) == 0 ||
          k.rfind("rgb_domain_", 0) == 0) {
        j[k] = v;
      }
    }
    for (const char* k : {"schema", "container_sha256_equal", "frames_identical", "identical_frames", "baseline",
                          "candidate", "metrics_pixel_format", "conversion"}) {
      if (c.contains(k)) j[k] = c[k];
    }
    return j;
  };
  if (!provenance.is_null()) {
    const std::string commit = provenance.value("git_commit", "");
    const bool hex40 = commit.size() == 40 && commit.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex40) {
      throw std::runtime_error("bless: provenance git_commit must be a 40-hex commit hash, got '" + commit +
                               "' (run scripts/nightly_e2e.sh --commit $(git rev-parse HEAD))");
    }
  }
  nlohmann::json g = {{"schema", kGoldenSchema},
                      {"arch", arch},
                      {"config", run.at("config")},
                      {"device", run.value("device", "")},
                      {"kernel_path", run.value("kernel_path", "")},
                      {"torch_version", run.value("torch_version", "")},
                      {"high", identity(*high)},
                      {"lossless", identity(*lossless)}};
  if (!comparison.is_null()) g["lossless_vs_high"] = summary(comparison);
  if (!high_comparison.is_null()) g["high_vs_high_eager"] = summary(high_comparison);
  if (!provenance.is_null()) g["provenance"] = provenance;
  return g;
}

}  // namespace fuseproof::e2e
