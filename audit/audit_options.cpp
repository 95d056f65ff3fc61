// audit_options.cpp: the option table and everything generated from it.
#include "audit/audit_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "audit/quant_classes.h"
#include "common/exit_status.h"
#include "common/golden_library.h"
#include "common/parse_integer.h"

namespace fuseproof::audit {

namespace {

using S = std::string AuditOptions::*;
constexpr long double kU64Max = 18446744073709551615.0L;

/// The elementwise battery's classes, in order (--only's help; expect_audit.cmake reads them there).
std::string elementwise_class_list() {
  std::string s;
  for (CheckClass c : kAllCheckClasses) s += (s.empty() ? "" : ", ") + std::string(check_class_name(c));
  return s;
}

/// A quantization op's classes, in order (audit/quant_classes.h).
std::string quant_class_list() {
  std::string s;
  for (CheckClass c : quant_check_classes()) s += (s.empty() ? "" : ", ") + std::string(check_class_name(c));
  return s;
}

std::vector<OptionDef> build_table() {
  // clang-format off
  return {
    {"--op", "op", "Op to audit (fuseproof ops lists them); default: the plugin's", S(&AuditOptions::op)},
    {"--contract", "contract", "Contract to judge against: eager, fp32 or fma, or a quantization op's (vllm-ref, "
     "rcp-approx, te, flashinfer-exact, fp8-group, fp8-group-ue8m0; fuseproof ops lists each op's); default: the one "
     "the plugin claims, or the built-in kernel of the op's first",
     S(&AuditOptions::contract)},
    {"--plugin", "plugin", "Kernel plugin .so (kernels/fuseproof_kernel_abi.h); default: the op's built-in",
     S(&AuditOptions::plugin), 0, 0, false, false},
    {"--backend", "backend", "cuda or emulated; default: the plugin's memory, else cuda when a GPU works",
     S(&AuditOptions::backend), 0, 0, false, false},
    {"--dtype", "dtype", "bf16, fp16 or all", S(&AuditOptions::dtype), 0, 0, false, false},
    {"--only", "only", "Run one check class: " + elementwise_class_list() + "; of a quantization op: " +
     quant_class_list(), S(&AuditOptions::only), 0, 0, false, false},
    {"--seed", "seed", "Seed of every random input", &AuditOptions::seed, 0, kU64Max},
    {"--math-model", "math_model", "Reference tanhf/expf/erff: cuda, libm, exact (default: cuda on CUDA, libm on "
     "the host)", S(&AuditOptions::math_model), 0, 0, false, true, "--tanh-model"},
    {"--domain-biases", "domain_biases", "Second inputs (bias, up) in the domain class, 1..65536 (65536 = all 2^32 "
     "pairs; default 65536 on CUDA, 1024 on the host)", &AuditOptions::domain_biases, 1, 65536},
    {"--stage-rows", "stage_rows", "A quantization op's stages class: tensor amaxes of the scale step, 1..65536 "
     "(default 65536 on CUDA: all 2^32 NVFP4 pairs, minutes a dtype on a 16-core GPU host; 24 on the host); the "
     "element step takes a sixth as many global scales (at least 2) and 4 times as many FP8 group amaxes, all of "
     "them at 65536 and by default on CUDA", &AuditOptions::stage_rows, 1, 65536},
    {"--differences", "differences", "A quantization op's stages class writes every input on which the subject and "
     "each other contract differ into DIR/<op>.<contract>.vs.<other>.<dtype>.tsv (a directory, created if absent; "
     "not a symbolic link)", S(&AuditOptions::differences)},
    {"--max-width", "max_width", "Every valid width up to this (default 65536 on CUDA, 16384 on the host)",
     &AuditOptions::max_width, 1, 1048576},
    {"--property-cases", "property_cases", "Random shapes per dtype", &AuditOptions::property_cases, 1, 1000000},
    {"--shapes", "shapes", "More shapes for the shapes class: ROWSxWIDTH[,ROWSxWIDTH...] (the op's output)",
     S(&AuditOptions::shapes)},
    {"--model", "model", "A named catalogue of production shapes for the shapes class (wan2.2)",
     S(&AuditOptions::model)},
    {"--no-default-shapes", "default_shapes", "The shapes class runs only --shapes and --model",
     &AuditOptions::default_shapes},
    {"--stop-after", "stop_after", "Stop a check class after this many mismatches (0: never; exact histograms)",
     &AuditOptions::stop_after, 0, kU64Max},
    {"--records", "records", "Mismatch lines kept per check", &AuditOptions::records, 1, 100000},
    {"--pdl-delay-ms", "pdl_delay_ms", "How late the PDL producer writes the inputs", &AuditOptions::pdl_delay_ms, 0,
     10000},
    // At least a second: the watchdog polls every 50 ms, and an honest call of the domain class takes longer than
    // that; a shorter limit would blame the kernel for the auditor's own pace.
    {"--call-timeout", "call_timeout", "Seconds one call into the kernel may take before it is a hang (1..86400)",
     &AuditOptions::call_timeout_s, 1, 86400},
    {"--no-isolation", "isolate", "Run every class in one child process (a crash FAILs the classes from there on)",
     &AuditOptions::isolate,
     0, 0, false, false},
    {"--first-fail", "first_fail", "Skip the classes after the first failure (mutation runs on a budget)",
     &AuditOptions::first_fail, 0, 0, false, false},
    {"--lanes", "lanes", "Dtypes audited side by side, each class in its own child process (1 or 2; default 2 on "
     "CUDA, where a class's host work is serial and the GPU idles, 1 on the host)", &AuditOptions::lanes, 1, 2, false,
     false},
    {"--profile", "profile", "Print where each class's time went (phases, cases per second) beside this machine's "
     "copy and hash throughput, measured in the same run (a benchmark: nothing is asserted on time)",
     &AuditOptions::profile, 0, 0, false, false},
    {"--host-compare", "device_compare", "On a CUDA subject, make the widths, domain and stages classes' calls one "
     "at a time and compare them on the host (by default their calls are made in batches on the device and compared "
     "there with the reference's tables, the host path again for any call that is not clean: docs/AUDIT.md, Comparing "
     "by digest, and on the device)", &AuditOptions::device_compare, 0, 0, false, true},
    {"--class-children", "class_groups", "Run each check class in a child process of its own, the subject's runtime "
     "started once a class (by default a dtype's classes run in order in one child, and a class after one that is not "
     "clean in a child of its own: docs/AUDIT.md, Class groups)", &AuditOptions::class_groups, 0, 0, false, false},
    {"--golden-dir", "golden_dir", "golden/ (default: $FUSEPROOF_GOLDEN_DIR or the source tree)",
     S(&AuditOptions::golden_dir), 0, 0, false, false},
    {"--golden-build-dir", "golden_build_dir", "Unpacked golden archives (default: the build tree)",
     S(&AuditOptions::golden_build_dir), 0, 0, false, false},
    {"--arch", "arch", "Golden architecture (default: the GPU's, else the only one golden/ holds)",
     S(&AuditOptions::arch)},
    {"--scope", "scope", "A named set of the options above, each overridden by the option given: " + scope_list(),
     S(&AuditOptions::scope)},
  };
  // clang-format on
}

std::vector<ScopeDef> build_scopes() {
  // clang-format off
  return {
    {"quick", "a first look in seconds on a GPU: 64 domain rows, widths to 2,048, one shape of 65,537 rows, 10 s "
     "calls, 4 stage rows (4 tensor amaxes of the NVFP4 scale step, 2 global scales, 16 FP8 group amaxes)",
     {{"domain_biases", "64"}, {"max_width", "2048"}, {"default_shapes", "false"}, {"shapes", "65537x64"},
      {"call_timeout", "10"}, {"stage_rows", "4"}}},
    {"mutant", "a mutation run on a budget: 2,048 domain rows, widths to 16,384 (past 8,192), rows above 65,535 "
     "and one call above 2^31 elements, 10 s calls (the hang), stop at the first failing class, 24 stage rows",
     {{"domain_biases", "2048"}, {"max_width", "16384"}, {"default_shapes", "false"},
      {"shapes", "65537x64,155345x13824"}, {"call_timeout", "10"}, {"first_fail", "true"}, {"stage_rows", "24"}}},
    {"default", "the backend's defaults: the production envelope on CUDA, a lighter one on the host", {}},
    {"envelope", "the production envelope on any backend: every valid width to 65,536, the op's production shapes, "
     "all 2^32 domain pairs", {{"domain_biases", "65536"}, {"max_width", "65536"}, {"default_shapes", "true"},
                               {"stage_rows", "65536"}}},
  };
  // clang-format on
}

bool is_number(const OptionDef& d) {
  return !std::holds_alternative<std::string AuditOptions::*>(d.field) &&
         !std::holds_alternative<bool AuditOptions::*>(d.field);
}

bool is_integer(const OptionDef& d) { return is_number(d) && !std::holds_alternative<double AuditOptions::*>(d.field); }

/// "%.15g" when it reads back as the same double, else "%.17g" (always what strtod reads back exactly).
std::string double_text(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.15g", v);
  if (std::strtod(b, nullptr) != v) std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

[[noreturn]] void refuse(const OptionDef& d, const std::string& got) {
  if (is_integer(d)) {
    std::visit([&](auto m) {
      using T = std::remove_cv_t<std::remove_reference_t<decltype(AuditOptions().*m)>>;
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        throw UsageError("audit: " + integer_refusal<T>(d.flag, T(d.min), T(d.max), got));
    }, d.field);
  }
  throw UsageError("audit: " + d.flag + ": must be a number" + (d.key == "call_timeout" ? " of seconds" : "") +
                   " in " + (d.min_open ? "(" : "[") + double_text(double(d.min)) + ", " + double_text(double(d.max)) +
                   "], got '" + got + "'");
}

}  // namespace

void set_option_number(AuditOptions& o, const OptionDef& d, const std::string& text) {
  if (is_integer(d)) {
    std::visit([&](auto m) {
      using T = std::remove_cv_t<std::remove_reference_t<decltype(o.*m)>>;
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const std::optional<T> v = parse_integer<T>(text, T(d.min), T(d.max));
        if (!v) refuse(d, text);
        o.*m = *v;
      }
    }, d.field);
    return;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v > d.max || (d.min_open ? v <= d.min : v < d.min))
    refuse(d, text);
  o.*std::get<double AuditOptions::*>(d.field) = v;
}

std::string option_number_text(const AuditOptions& o, const OptionDef& d) {
  return std::visit([&](auto m) -> std::string {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(o.*m)>>;
    if constexpr (std::is_same_v<T, double>) {
      return double_text(o.*m);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return std::to_string(o.*m);
    } else {
      return "";
    }
  }, d.field);
}

const char* check_class_name(CheckClass c) {
  switch (c) {
    case CheckClass::kRejection: return "rejection";
    case CheckClass::kExtreme: return "extreme";
    case CheckClass::kProperty: return "property";
    case CheckClass::kWidths: return "widths";
    case CheckClass::kShapes: return "shapes";
    case CheckClass::kDomain: return "domain";
    case CheckClass::kStages: return "stages";
    case CheckClass::kPdl: return "pdl";
    case CheckClass::kBatch: return "batch";
    case CheckClass::kRepeat: return "repeat";
    case CheckClass::kHistory: return "history";
    case CheckClass::kStreams: return "streams";
    case CheckClass::kGraph: return "graph";
    case CheckClass::kBlocks: return "blocks";
    case CheckClass::kLayout: return "layout";
  }
  return "?";
}

bool check_class_mixes_dtypes(CheckClass c) { return c == CheckClass::kHistory; }

std::optional<CheckClass> parse_check_class(const std::string& s) {
  for (CheckClass c : kAllCheckClasses)
    if (s == check_class_name(c)) return c;
  for (CheckClass c : kQuantOnlyCheckClasses)
    if (s == check_class_name(c)) return c;
  return std::nullopt;
}

std::string check_class_list() {
  std::string s;
  for (CheckClass c : kAllCheckClasses) s += (s.empty() ? "" : ", ") + std::string(check_class_name(c));
  for (CheckClass c : kQuantOnlyCheckClasses) s += ", " + std::string(check_class_name(c));
  return s;
}

const std::vector<OptionDef>& option_table() {
  static const std::vector<OptionDef> table = build_table();
  return table;
}

const std::vector<ScopeDef>& scope_table() {
  static const std::vector<ScopeDef> table = build_scopes();
  return table;
}

std::string scope_list() {
  std::string s;
  for (const ScopeDef& d : scope_table()) s += (s.empty() ? "" : ", ") + d.name;
  return s;
}

void apply_scope(AuditOptions& o, const std::vector<std::string>& given) {
  const auto& scopes = scope_table();
  const auto scope = std::find_if(scopes.begin(), scopes.end(), [&](const ScopeDef& d) { return d.name == o.scope; });
  if (scope == scopes.end()) throw UsageError("audit: unknown --scope " + o.scope + " (" + scope_list() + ")");
  const auto& table = option_table();
  for (const auto& setting : scope->settings) {
    // (not a structured binding: clang 14 cannot capture one)
    const std::string& key = setting.first;
    const std::string& text = setting.second;
    if (std::find(given.begin(), given.end(), key) != given.end()) continue;
    const auto d = std::find_if(table.begin(), table.end(), [&](const OptionDef& e) { return e.key == key; });
    if (d == table.end()) throw std::logic_error("scope " + scope->name + " names no option " + key);
    if (auto* s = std::get_if<std::string AuditOptions::*>(&d->field)) {
      o.**s = text;
    } else if (auto* b = std::get_if<bool AuditOptions::*>(&d->field)) {
      o.**b = text == "true";
    } else {
      set_option_number(o, *d, text);
    }
  }
}

void add_options(CLI::App& sub, AuditOptions& o, std::vector<std::string>& numbers_text,
                 std::function<std::vector<std::string>()>* given) {
  const auto& table = option_table();
  numbers_text.assign(table.size(), "");
  for (size_t i = 0; i < table.size(); ++i) {
    const OptionDef& d = table[i];
    const std::string names = d.alias.empty() ? d.flag : d.flag + "," + d.alias;
    if (auto* s = std::get_if<std::string AuditOptions::*>(&d.field)) {
      sub.add_option(names, o.**s, d.help);
    } else if (auto* b = std::get_if<bool AuditOptions::*>(&d.field)) {
      // A default-true switch is cleared by its --no- flag; a default-false one is set by its flag.
      sub.add_flag((AuditOptions().**b ? "!" : "") + names, o.**b, d.help);
    } else {
      sub.add_option(names, numbers_text[i], d.help);
    }
  }
  *given = [&sub, &table] {
    std::vector<std::string> keys;
    for (const OptionDef& d : table)
      if (sub.get_option(d.flag)->count() > 0) keys.push_back(d.key);
    return keys;
  };
  (void)o;
}

std::vector<Shape> parse_shapes(const std::string& list) {
  std::vector<Shape> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    const size_t x = item.find('x');
    auto number = [&](const std::string& t) -> int64_t {
      if (t.empty() || t.size() > 12 || t.find_first_not_of("0123456789") != std::string::npos) return -1;
      return std::stoll(t);
    };
    const int64_t rows = x == std::string::npos ? -1 : number(item.substr(0, x));
    const int64_t width = x == std::string::npos ? -1 : number(item.substr(x + 1));
    if (rows < 1 || width < 1)
      throw UsageError("audit: --shapes entries must be ROWSxWIDTH with positive integers, got '" + item + "'");
    out.push_back({rows, width, "--shapes"});
    pos = comma + 1;
  }
  return out;
}

std::vector<Shape> model_shapes(const std::string& model) {
  if (model == "wan2.2")
    return {{32760, 5120, "wan2.2 5120-wide FFN (seed shape)"},
            {32760, 13824, "wan2.2 FFN up, 32,760 tokens (seed shape)"},
            {4096, 13824, "wan2.2 FFN up, 4,096 tokens (seed shape)"},
            {75600, 13824, "wan2.2 FFN up, 81 frames at 720p: 75,600 tokens (seed shape)"}};
  throw UsageError("audit: unknown --model " + model + " (known: wan2.2)");
}

void apply_cli_options(AuditOptions& o, const std::vector<std::string>& numbers,
                       const std::vector<std::string>& given) {
  const auto& table = option_table();
  for (size_t i = 0; i < table.size() && i < numbers.size(); ++i)
    if (is_number(table[i]) && std::find(given.begin(), given.end(), table[i].key) != given.end())
      set_option_number(o, table[i], numbers[i]);
  apply_scope(o, given);
  resolve_options(o);
}

void resolve_options(AuditOptions& o) {
  o.dtypes.clear();
  if (o.dtype == "all") {
    o.dtypes = {ref::Dtype::kBf16, ref::Dtype::kFp16};
  } else if (auto d = ref::parse_dtype(o.dtype)) {
    o.dtypes = {*d};
  } else {
    throw UsageError("audit: unknown --dtype " + o.dtype + " (bf16, fp16, all)");
  }
  if (!o.backend.empty() && o.backend != "cuda" && o.backend != "emulated")
    throw UsageError("audit: unknown --backend " + o.backend + " (cuda, emulated)");
  if (std::none_of(scope_table().begin(), scope_table().end(), [&](const ScopeDef& d) { return d.name == o.scope; }))
    throw UsageError("audit: unknown --scope " + o.scope + " (" + scope_list() + ")");
  o.only_class.reset();
  if (!o.only.empty()) {
    o.only_class = parse_check_class(o.only);
    if (!o.only_class) throw UsageError("audit: unknown --only " + o.only + " (" + check_class_list() + ")");
  }
  if (!o.arch.empty()) require_arch_name(o.arch);
  if (!o.differences.empty()) {
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(o.differences, ec);
    if (st.type() == std::filesystem::file_type::symlink)
      throw UsageError("audit: --differences must name a directory, not a symbolic link, got " + o.differences);
    if (std::filesystem::exists(st) && st.type() != std::filesystem::file_type::directory)
      throw UsageError("audit: --differences must name a directory, got " + o.differences);
  }
  if (!o.math_model.empty() && o.math_model != "cuda" && o.math_model != "libm" && o.math_model != "exact")
    throw UsageError("audit: unknown --math-model " + o.math_model + " (cuda, libm, exact)");
  o.extra_shapes.clear();
  if (!o.shapes.empty()) o.extra_shapes = parse_shapes(o.shapes);
  if (!o.model.empty()) {
    const auto v = model_shapes(o.model);
    o.extra_shapes.insert(o.extra_shapes.end(), v.begin(), v.end());
  }
  if (!o.default_shapes && o.extra_shapes.empty() && (!o.only_class || *o.only_class == CheckClass::kShapes))
    throw UsageError("audit: --no-default-shapes leaves the shapes class empty; give --shapes or --model");
}

nlohmann::json options_to_json(const AuditOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const OptionDef& d : option_table())
    std::visit([&](auto m) { j[d.key] = o.*m; }, d.field);
  j["command"] = o.command;
  return j;
}

AuditOptions options_from_json(const nlohmann::json& j) {
  AuditOptions o;
  try {
    for (const OptionDef& d : option_table())
      if (j.contains(d.key))
        std::visit([&](auto m) { j.at(d.key).get_to(o.*m); }, d.field);
    o.command = j.value("command", "");
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("audit: malformed options: ") + e.what());
  }
  resolve_options(o);
  return o;
}

void options_from_python(AuditOptions& o, const nlohmann::json& kwargs) {
  const auto& table = option_table();
  for (const auto& item : kwargs.items()) {
    const std::string key = item.key();  // (not a structured binding: clang 14 cannot capture one)
    const nlohmann::json& v = item.value();
    const auto it = std::find_if(table.begin(), table.end(), [&](const OptionDef& d) { return d.key == key; });
    if (it == table.end()) {
      std::string keys;
      for (const OptionDef& d : table) keys += (keys.empty() ? "" : ", ") + d.key;
      throw UsageError("fuseproof audit: unknown option " + key + " (" + keys + ")");
    }
    const OptionDef& d = *it;
    if (auto* s = std::get_if<std::string AuditOptions::*>(&d.field)) {
      if (!v.is_string()) throw UsageError("fuseproof audit: option " + key + " must be str, got " + v.dump());
      o.**s = v.get<std::string>();
    } else if (auto* b = std::get_if<bool AuditOptions::*>(&d.field)) {
      if (!v.is_boolean()) throw UsageError("fuseproof audit: option " + key + " must be bool, got " + v.dump());
      o.**b = v.get<bool>();
    } else {
      const bool ok = is_integer(d) ? v.is_number_integer() : v.is_number();
      if (!ok || v.is_boolean())
        throw UsageError("fuseproof audit: option " + key + " must be " + (is_integer(d) ? "int" : "a number") +
                         ", got " + v.dump());
      set_option_number(o, d, v.dump());
    }
  }
  std::vector<std::string> given;
  for (const auto& item : kwargs.items()) given.push_back(item.key());
  apply_scope(o, given);
}

std::string reproduce_options(const AuditOptions& o, const std::vector<std::string>& except) {
  const AuditOptions defaults;
  std::string s;
  for (const OptionDef& d : option_table()) {
    if (!d.reproduce || std::find(except.begin(), except.end(), d.key) != except.end()) continue;
    if (auto* str = std::get_if<std::string AuditOptions::*>(&d.field)) {
      if (o.**str != defaults.**str) s += " " + d.flag + " " + o.**str;
    } else if (auto* b = std::get_if<bool AuditOptions::*>(&d.field)) {
      if (o.**b != defaults.**b) s += " " + d.flag;
    } else if (option_number_text(o, d) != option_number_text(defaults, d)) {
      s += " " + d.flag + " " + option_number_text(o, d);
    }
  }
  return s;
}

nlohmann::json option_table_json() {
  const AuditOptions defaults;
  nlohmann::json a = nlohmann::json::array();
  for (const OptionDef& d : option_table()) {
    nlohmann::json e = {{"key", d.key}, {"flag", d.flag}, {"help", d.help}};
    std::visit([&](auto m) { e["default"] = defaults.*m; }, d.field);
    e["type"] = std::holds_alternative<std::string AuditOptions::*>(d.field) ? "str"
                : std::holds_alternative<bool AuditOptions::*>(d.field)      ? "bool"
                : is_integer(d)                                              ? "int"
                                                                             : "float";
    a.push_back(e);
  }
  return a;
}

}  // namespace fuseproof::audit
