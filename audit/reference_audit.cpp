// reference_audit.cpp: the oracle checked against golden data captured on GPUs, for every op of the spec.
#include "audit/reference_audit.h"

#include <filesystem>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "audit/op_model.h"
#include "common/domain_sweep.h"
#include "common/golden_library.h"
#include "common/progress_line.h"
#include "common/tree_digest.h"
#include "reference/activation_table.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"
#include "reference/sweep_row.h"

namespace fuseproof::audit {

namespace {

void nan_rows(const GoldenArch& g, std::vector<VerdictRow>& rows) {
  try {
    g.verify("nan_observed.json");
  } catch (const MissingDataError& e) {
    rows.push_back({"NaN policies (" + g.arch() + ")", "-", 0, 0, "MISSING", e.what()});
    return;
  }
  std::ifstream in(g.path("nan_observed.json"));
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) throw CorruptDataError(g.path("nan_observed.json") + " is not a JSON object");
  struct Src {
    const char* key;
    ref::NanPolicy policy;
    const char* what;
  };
  for (const Src& src : {Src{"float32_to", ref::NanPolicy::kCudaCvtRn, "device float->half"},
                         Src{"host_torch_float32_to", ref::NanPolicy::kC10Vectorized, "device host torch CPU"}}) {
    if (!j.contains(src.key)) continue;
    for (ref::Dtype d : ref::kAllDtypes) {
      VerdictRow row{std::string("NaN policy ") + ref::nan_policy_name(src.policy) + " vs " + src.what + " (" +
                         g.arch() + ")",
                     ref::dtype_name(d), 0, 0, "PASS", ""};
      for (const auto& [in_hex, out_hex] : j[src.key][ref::dtype_name(d)].items()) {
        const uint32_t u = uint32_t(std::stoul(in_hex, nullptr, 16));
        const uint16_t want = uint16_t(std::stoul(out_hex.get<std::string>(), nullptr, 16));
        const uint16_t got = ref::f32_to_half(d, ref::f32_from_bits(u), src.policy);
        ++row.cases;
        if (got != want) {
          ++row.mismatches;
          char buf[80];
          std::snprintf(buf, sizeof buf, "f32=0x%08X => 0x%04X expected 0x%04X", u, got, want);
          row.detail = buf;
        }
      }
      if (row.mismatches) row.verdict = "FAIL";
      rows.push_back(row);
    }
  }
}

/// Every activation's tables under every math model (only cuda is claimed to predict the device), and the ex2
/// arguments the cuda model computes against the ones the device computed.
void activation_rows(const GoldenArch& g, const ref::MufuModel* mufu, std::vector<VerdictRow>& rows) {
  for (ref::Activation a : ref::kAllActivations) {
    for (ref::Dtype d : ref::kAllDtypes) {
      for (bool f32 : {false, true}) {
        const std::string file = golden_table_file(a, d, f32);
        std::vector<uint32_t> want;
        try {
          if (f32) want = g.u32_table(file);
          else for (uint16_t v : g.u16_table(file)) want.push_back(v);
        } catch (const MissingDataError& e) {
          rows.push_back({file + " (" + g.arch() + ")", ref::dtype_name(d), 0, 0, "MISSING", e.what()});
          continue;
        }
        for (ref::MathModel m : ref::kAllMathModels) {
          if (m == ref::MathModel::kCuda && !mufu) continue;
          ref::MathConfig cfg;
          cfg.math = m;
          cfg.mufu = mufu;
          uint64_t diff = 0;
          std::string first;
          std::vector<uint32_t> got;
          try {
            if (f32) got = ref::activation_table_f32(a, d, cfg);
            else for (uint16_t v : ref::activation_table(a, d, cfg)) got.push_back(v);
          } catch (const std::domain_error& e) {  // the cuda model reached an ex2 argument the capture lacks
            rows.push_back({file + ", math=" + ref::math_model_name(m) + " vs " + g.arch(), ref::dtype_name(d), 0, 0,
                            "MISSING", e.what()});
            continue;
          }
          for (size_t i = 0; i < got.size(); ++i) {
            const bool nan_pair = f32 && (got[i] & 0x7FFFFFFFu) > 0x7F800000u && (want[i] & 0x7FFFFFFFu) > 0x7F800000u;
            if (got[i] == want[i] || nan_pair) continue;
            if (diff++ < 2) {
              char b[80];
              std::snprintf(b, sizeof b, f32 ? "%sx=0x%04zX => 0x%08X expected 0x%08X" : "%sx=0x%04zX => 0x%04X expected 0x%04X",
                            first.empty() ? "" : "; ", i, got[i], want[i]);
              first += b;
            }
          }
          const bool claimed = m == ref::MathModel::kCuda;
          rows.push_back({std::string(ref::activation_name(a)) + (f32 ? " binary32" : "") + " table, math=" +
                              ref::math_model_name(m) + " vs " + g.arch(),
                          ref::dtype_name(d), 65536, diff, claimed ? (diff ? "FAIL" : "PASS") : "INFO", first});
        }
      }
      if (!mufu || !ref::activation_needs_ex2_points(a)) continue;
      const std::string set = std::string(ref::activation_name(a)) + "_" + ref::dtype_name(d);
      const auto& pts = mufu->ex2_points(set);
      if (pts.empty()) {
        rows.push_back({"ex2 arguments of " + set + " (" + g.arch() + ")", ref::dtype_name(d), 0, 0, "MISSING",
                        "ex2_points.tar.xz has no ex2_" + set + ".bin (capture_golden.py --add-ops)"});
        continue;
      }
      uint64_t diff = 0;
      std::string first;
      for (uint32_t p = 0; p < 65536; ++p) {
        const float x = ref::half_to_f32(d, uint16_t(p));
        const uint32_t got = ref::f32_bits(ref::activation_ex2_argument(a, x));
        if (got == pts[p].first || (std::isnan(x) && std::isnan(ref::f32_from_bits(pts[p].first)))) continue;
        if (diff++ == 0) {
          char b[96];
          std::snprintf(b, sizeof b, "x=0x%04X: argument 0x%08X, the device's 0x%08X", p, got, pts[p].first);
          first = b;
        }
      }
      rows.push_back({"ex2 arguments of " + std::string(ref::activation_name(a)) + ", reference vs " + g.arch(),
                      ref::dtype_name(d), 65536, diff, diff ? "FAIL" : "PASS", first});
    }
  }
}

/// The whole-domain digest of `row` against golden: the tree digest where golden has one (hashed in parallel),
/// else the flat stream.
VerdictRow digest_row(const GoldenArch& g, const std::string& key, ref::Dtype d, const RowFn& row, bool progress) {
  const std::string label = key + " whole-domain digest vs " + g.arch();
  const auto tree_want = g.digest(key + "_tree", d);
  const auto flat_want = tree_want ? std::nullopt : g.digest(key, d);
  if (!tree_want && !flat_want)
    return {label, ref::dtype_name(d), 0, 0, "MISSING", g.path("digests.json") + " has no " + key + " digest"};
  const auto t0 = std::chrono::steady_clock::now();
  std::string got;
  if (tree_want) {
    got = sweep_tree_digest(row);
  } else {
    DomainDigests flat(true, false);
    ProgressLine line(stderr, key + " " + ref::dtype_name(d) + " rows", 65536, progress);
    sweep_domain(row, [&](uint32_t b0, uint32_t n, const uint16_t* out) {
      flat.update(out, n);
      line.update(b0 + n);
    });
    line.finish();
    got = flat.flat_hex();
  }
  const std::string& want = tree_want ? *tree_want : *flat_want;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char detail[200];
  std::snprintf(detail, sizeof detail, "%s %.16s... %s golden, %.1f s", tree_want ? "tree" : "sha256", got.c_str(),
                got == want ? "equals" : "DIFFERS FROM", secs);
  return {label, ref::dtype_name(d), uint64_t(1) << 32, got == want ? 0u : 1u, got == want ? "PASS" : "FAIL", detail};
}

}  // namespace

std::vector<VerdictRow> run_reference_audit(const ReferenceAuditOptions& o) {
  std::vector<VerdictRow> rows;
  const auto archs = golden_archs(o.golden_dir);
  if (archs.empty()) rows.push_back({"golden data", "-", 0, 0, "MISSING", "no golden/sm_* folder under " + o.golden_dir});
  for (const std::string& arch : archs) {
    const GoldenArch g(o.golden_dir, o.golden_build_dir, arch);
    const ref::MufuModel* mufu = nullptr;
    try {
      mufu = &g.mufu();
    } catch (const MissingDataError& e) {
      rows.push_back({"MUFU tables (" + arch + ")", "-", 0, 0, "MISSING", e.what()});
    }
    activation_rows(g, mufu, rows);
    if (o.whole_domain) {
      for (ref::Dtype d : ref::kAllDtypes) {
        if (!o.dtypes.empty() && std::find(o.dtypes.begin(), o.dtypes.end(), d) == o.dtypes.end()) continue;
        if (o.ops.empty())
          rows.push_back(digest_row(g, "add_round", d, [d](uint16_t b, uint16_t* out) {
            ref::sweep_row(d, nullptr, ref::NanPolicy::kCudaCvtRn, b, out);
          }, o.progress));
        if (!mufu) continue;
        ref::MathConfig cfg;
        cfg.mufu = mufu;
        for (const ref::OpSpec& op : ref::op_registry())
          for (const ref::ContractSpec& c : op.contracts) {
            if (!o.ops.empty() && std::find(o.ops.begin(), o.ops.end(), op.name) == o.ops.end()) continue;
            if (const auto only = o.contracts.find(op.name);
                only != o.contracts.end() &&
                std::find(only->second.begin(), only->second.end(), c.contract) == only->second.end())
              continue;
            std::unique_ptr<ref::OpPlan> plan;
            try {
              plan = std::make_unique<ref::OpPlan>(op, c.contract, d, cfg);
            } catch (const std::domain_error& e) {  // an ex2 argument the capture lacks
              rows.push_back({golden_digest_key(op.name, c.contract) + " whole-domain digest vs " + arch,
                              ref::dtype_name(d), 0, 0, "MISSING", e.what()});
              continue;
            }
            // An op of 3 or more inputs has no 2^32 domain: its golden data are per rounding stage (the stages
            // class compares them), so there is no whole-domain digest to check here.
            if (!plan->tabulated()) continue;
            rows.push_back(digest_row(g, golden_digest_key(op.name, c.contract), d,
                                      [&plan](uint16_t b, uint16_t* out) { plan->row(b, out); }, o.progress));
          }
      }
    }
    nan_rows(g, rows);
  }
  return rows;
}

std::string reference_audit_scope(const ReferenceAuditOptions& o) {
  if (!o.whole_domain) return "activation tables and NaN patterns (--quick: without the 2^32 digests)";
  if (o.ops.empty()) return "every op";
  std::string ops;
  for (const auto& op : o.ops) {
    ops += (ops.empty() ? "" : ", ") + op;
    if (const auto only = o.contracts.find(op); only != o.contracts.end()) {
      std::string cs;
      for (const ref::Contract c : only->second) cs += (cs.empty() ? "" : " and ") + std::string(ref::contract_name(c));
      ops += " (" + cs + ")";
    }
  }
  if (o.dtypes.size() == 1) ops += std::string(", ") + ref::dtype_name(o.dtypes.front()) + " only";
  return "activation tables, NaN patterns and the whole-domain digests of " + ops + "; `fuseproof reference-audit` "
         "checks every op";
}

std::string overall_verdict(const std::vector<VerdictRow>& rows) {
  bool missing = rows.empty();
  for (const auto& r : rows) {
    if (r.verdict == "FAIL") return "FAIL";
    missing = missing || r.verdict == "MISSING";
  }
  return missing ? "INCOMPLETE" : "PASS";
}

std::string verdict_summary_line(const std::string& tool, const std::string& verdict,
                                 const std::vector<VerdictRow>& rows, const std::string& when_none) {
  if (verdict == "PASS") return "";
  const bool fail = verdict == "FAIL";
  std::string names;
  size_t n = 0;
  for (const VerdictRow& r : rows) {
    if (fail ? r.verdict != "FAIL" : r.verdict != "MISSING" && r.verdict != "INCOMPLETE") continue;
    if (++n <= 4) names += (names.empty() ? "" : ", ") + r.check + (r.dtype.empty() || r.dtype == "-" ? "" : " " + r.dtype);
  }
  if (n > 4) names += ", ...";
  if (n == 0) return tool + ": " + verdict + ": " + when_none;
  return tool + ": " + verdict + ": " + std::to_string(n) + " of " + std::to_string(rows.size()) + " checks " +
         (fail ? "failed" : "without evidence") + " (" + names + ")";
}

int verdict_exit_status(const std::string& verdict) {
  return verdict == "PASS" ? kExitPass : verdict == "FAIL" ? kExitFail : kExitIncomplete;
}

bool print_verdict_table(const std::string& title, const std::vector<VerdictRow>& rows) {
  size_t wc = 5, wd = 5;
  for (const auto& r : rows) {
    wc = std::max(wc, r.check.size());
    wd = std::max(wd, r.dtype.size());
  }
  std::printf("\n%s\n", title.c_str());
  std::printf("%-*s  %-*s  %12s  %10s  %-7s  %s\n", int(wc), "check", int(wd), "dtype", "cases", "mismatches", "verdict", "detail");
  std::printf("%s\n", std::string(wc + wd + 50, '-').c_str());
  bool ok = true;
  for (const auto& r : rows) {
    std::printf("%-*s  %-*s  %12llu  %10llu  %-7s  %s\n", int(wc), r.check.c_str(), int(wd), r.dtype.c_str(),
                (unsigned long long)r.cases, (unsigned long long)r.mismatches, r.verdict.c_str(), r.detail.c_str());
    ok = ok && r.verdict != "FAIL";
  }
  return ok;
}

void add_reference_audit_command(CLI::App& app) {
  auto o = std::make_shared<ReferenceAuditOptions>();
  o->golden_dir = default_golden_dir();
  o->golden_build_dir = default_golden_build_dir();
  CLI::App* cmd = app.add_subcommand("reference-audit", "Check the CPU reference against every GPU's golden data");
  cmd->add_option("--golden-dir", o->golden_dir, "golden data root")->capture_default_str();
  cmd->add_option("--golden-build-dir", o->golden_build_dir, "unpacked golden archives")->capture_default_str();
  cmd->add_flag("!--no-whole-domain", o->whole_domain, "skip the 2^32-pair digests");
  cmd->final_callback([o] {
    std::error_code ec;
    if (!std::filesystem::is_directory(o->golden_dir, ec))
      throw UsageError("reference-audit: --golden-dir " + o->golden_dir + " is not a directory");
    o->progress = isatty(2);
    const auto rows = run_reference_audit(*o);
    print_verdict_table("fuseproof reference self-audit", rows);
    const std::string v = overall_verdict(rows);
    std::printf("\nverdict: %s\n", v == "PASS"         ? "PASS (the reference predicts every captured GPU bit for bit)"
                                   : v == "INCOMPLETE" ? "INCOMPLETE (golden data missing: see the MISSING rows)"
                                                       : "FAIL");
    std::fflush(stdout);
    if (v != "PASS")
      std::fprintf(stderr, "%s%s\n",
                   verdict_summary_line("fuseproof reference-audit", v, rows,
                                        "no golden data under --golden-dir " + o->golden_dir + " (golden/<arch>/)")
                       .c_str(),
                   v == "INCOMPLETE" ? (" under --golden-dir " + o->golden_dir).c_str() : "");
    throw CLI::RuntimeError(verdict_exit_status(v));
  });
}

}  // namespace fuseproof::audit
