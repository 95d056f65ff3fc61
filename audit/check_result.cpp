// check_result.cpp: status names, the JSON codec of a check's result, the verdict of an audit.
#include "audit/check_result.h"

#include <algorithm>
#include <cstdio>

#include "common/exit_status.h"

namespace fuseproof::audit {

const char* check_status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kSkipped: return "skipped";
    case CheckStatus::kIncomplete: return "incomplete";
  }
  return "?";
}

std::optional<CheckStatus> parse_check_status(const std::string& s) {
  for (CheckStatus c : {CheckStatus::kPass, CheckStatus::kFail, CheckStatus::kSkipped, CheckStatus::kIncomplete})
    if (s == check_status_name(c)) return c;
  return std::nullopt;
}

std::string check_status_upper(CheckStatus s) {
  std::string u = check_status_name(s);
  for (char& ch : u) ch = char(ch - 'a' + 'A');
  return u;
}

void settle_check(CheckResult& r) {
  if (r.status == CheckStatus::kSkipped) return;
  if (!r.fault.empty() || r.mismatches || r.failed_checks) {
    r.status = CheckStatus::kFail;
    return;
  }
  if (r.cases == 0) {
    r.status = CheckStatus::kIncomplete;
    if (r.note.rfind("ran zero cases", 0) != 0) r.note = "ran zero cases" + (r.note.empty() ? "" : "; " + r.note);
    return;
  }
  if (r.incomplete_when_passing) {
    r.status = CheckStatus::kIncomplete;
    return;
  }
  r.status = CheckStatus::kPass;
  // A check whose expected outputs are all one value could not have failed: that is a defect of the battery.
  if (r.cls != CheckClass::kRejection && r.distinct_expected < 2) {
    r.status = CheckStatus::kFail;
    r.records.push_back("audit defect: every expected output was the same pattern; the check could not fail");
  }
}

namespace {

nlohmann::json steps_json(const std::vector<std::pair<int, uint64_t>>& steps) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [k, n] : steps) a.push_back({k, n});
  return a;
}

std::vector<std::pair<int, uint64_t>> steps_from_json(const nlohmann::json& a) {
  std::vector<std::pair<int, uint64_t>> v;
  for (const auto& p : a) v.emplace_back(p.at(0).get<int>(), p.at(1).get<uint64_t>());
  return v;
}

}  // namespace

nlohmann::json contract_distance_to_json(const ContractDistance& d) {
  nlohmann::json j = {{"contract", d.contract},           {"cases", d.cases},
          {"codes_differ", d.codes_differ},   {"code_steps", steps_json(d.code_steps)},
          {"blocks", d.blocks},               {"scales_differ", d.scales_differ},
          {"scale_steps", steps_json(d.scale_steps)}, {"nan_inf_differ", d.nan_inf_differ},
          {"sign_of_zero_differ", d.sign_of_zero_differ}, {"pairs", d.pairs},
          {"pairs_total", d.pairs_total}};
  if (!d.differences_path.empty())
    j["differences"] = {{"path", d.differences_path}, {"lines", d.differences_lines},
                        {"sha256", d.differences_sha256}};
  return j;
}

ContractDistance contract_distance_from_json(const nlohmann::json& j) {
  ContractDistance d;
  d.contract = j.at("contract");
  d.cases = j.at("cases");
  d.codes_differ = j.at("codes_differ");
  d.code_steps = steps_from_json(j.at("code_steps"));
  d.blocks = j.at("blocks");
  d.scales_differ = j.at("scales_differ");
  d.scale_steps = steps_from_json(j.at("scale_steps"));
  d.nan_inf_differ = j.at("nan_inf_differ");
  d.sign_of_zero_differ = j.at("sign_of_zero_differ");
  d.pairs = j.at("pairs").get<std::vector<std::string>>();
  d.pairs_total = j.at("pairs_total");
  if (j.contains("differences")) {
    const nlohmann::json& f = j.at("differences");
    d.differences_path = f.at("path");
    d.differences_lines = f.at("lines");
    d.differences_sha256 = f.at("sha256");
  }
  return d;
}

nlohmann::json check_to_json(const CheckResult& c) {
  nlohmann::json j = {{"class", check_class_name(c.cls)}, {"dtype", ref::dtype_name(c.dtype)},
                      {"status", check_status_name(c.status)}, {"cases", c.cases}, {"mismatches", c.mismatches},
                      {"failed_checks", c.failed_checks}, {"stopped_early", c.stopped_early}, {"distinct_expected", c.distinct_expected},
                      {"records", c.records}, {"fault", c.fault}, {"scope", c.scope}, {"note", c.note},
                      {"reproduce", c.reproduce}, {"seconds", c.seconds}, {"ulp_vs_contract", c.vs_contract.json()},
                      {"incomplete_when_passing", c.incomplete_when_passing}};
  if (c.has_correct) {
    j["ulp_vs_correctly_rounded"] = c.vs_correct.json();
    j["contract_ulp_vs_correctly_rounded"] = c.contract_vs_correct.json();
  }
  if (c.has_contract_vs_eager) j["contract_ulp_vs_eager"] = c.contract_vs_eager.json();
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& [name, s] : c.phases.phases) phases.push_back({name, s});
  j["phases"] = phases;
  if (c.outside_seconds > 0) j["outside_seconds"] = c.outside_seconds;
  if (!c.contract_distances.empty()) {
    nlohmann::json d = nlohmann::json::array();
    for (const ContractDistance& x : c.contract_distances) d.push_back(contract_distance_to_json(x));
    j["contract_distances"] = d;
  }
  return j;
}

std::string profile_line(const CheckResult& c) {
  char b[200];
  const double rate = c.seconds > 0 ? double(c.cases) / c.seconds : 0;
  std::snprintf(b, sizeof b, "%.2f s, %.3g cases/s (%.3g GB/s of output)", c.seconds, rate, rate * 2 / 1e9);
  std::string line = b;
  const char* sep = ": ";
  for (const auto& [name, s] : c.phases.phases) {
    std::snprintf(b, sizeof b, "%s%s %.2f s", sep, name.c_str(), s);
    line += b;
    sep = ", ";
  }
  std::snprintf(b, sizeof b, "%sother %.2f s", sep, std::max(0.0, c.seconds - c.phases.total()));
  line += b;
  if (c.outside_seconds > 0) {
    std::snprintf(b, sizeof b, "; outside the class's clock (its child's start, models, teardown) %.2f s", c.outside_seconds);
    line += b;
  }
  return line;
}

std::string no_errors_line(const CheckResult& c, const std::string& op, const std::string& contract) {
  return "In " + std::to_string(c.cases) + " cases, no errors found in " + op + " " + ref::dtype_name(c.dtype) +
         " (contract " + contract + ").";
}

CheckResult check_from_json(const nlohmann::json& j) {
  CheckResult c;
  const auto cls = parse_check_class(j.at("class"));
  const auto dt = ref::parse_dtype(j.at("dtype").get<std::string>());
  const auto st = parse_check_status(j.at("status"));
  if (!cls || !dt || !st) throw UsageError("audit: malformed check result");
  c.cls = *cls;
  c.dtype = *dt;
  c.status = *st;
  c.cases = j.at("cases");
  c.mismatches = j.at("mismatches");
  c.failed_checks = j.value("failed_checks", uint64_t(0));
  c.stopped_early = j.at("stopped_early");
  c.distinct_expected = j.at("distinct_expected");
  c.records = j.at("records").get<std::vector<std::string>>();
  c.fault = j.at("fault");
  c.scope = j.at("scope");
  c.note = j.at("note");
  c.reproduce = j.value("reproduce", "");
  c.seconds = j.at("seconds");
  c.vs_contract = UlpHistogram::from_json(j.at("ulp_vs_contract"));
  c.incomplete_when_passing = j.value("incomplete_when_passing", false);
  if (j.contains("ulp_vs_correctly_rounded")) {
    c.has_correct = true;
    c.vs_correct = UlpHistogram::from_json(j["ulp_vs_correctly_rounded"]);
    c.contract_vs_correct = UlpHistogram::from_json(j["contract_ulp_vs_correctly_rounded"]);
  }
  if (j.contains("contract_ulp_vs_eager")) {
    c.has_contract_vs_eager = true;
    c.contract_vs_eager = UlpHistogram::from_json(j["contract_ulp_vs_eager"]);
  }
  if (j.contains("phases"))
    for (const auto& p : j.at("phases")) c.phases.add(p.at(0).get<std::string>(), p.at(1).get<double>());
  if (j.contains("contract_distances"))
    for (const auto& d : j.at("contract_distances")) c.contract_distances.push_back(contract_distance_from_json(d));
  c.outside_seconds = j.value("outside_seconds", 0.0);
  return c;
}

std::string AuditResult::verdict() const {
  if (!passed || !load_fault.empty()) return "FAIL";
  if (!not_audited.empty()) return "INCOMPLETE";
  return complete ? "PASS" : "INCOMPLETE";
}

const CheckResult* AuditResult::killed_by() const {
  for (const auto& c : checks)
    if (c.status == CheckStatus::kFail) return &c;
  return nullptr;
}

}  // namespace fuseproof::audit
