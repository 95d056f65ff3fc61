// audit_options.h: the audit's options, each declared once in one table (name, type, range, default, help) from which
// the command line, the JSON of the isolation protocol and the reports, the reproduce line and the Python front end's
// options are all generated.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/dtype.h"

namespace CLI { class App; }

namespace fuseproof::audit {

/// The check classes, in the order they run (new classes are appended: the enumerator seeds each class's inputs).
/// The calls-that-remember classes come last, so that a bug the per-call classes see is named by them: batch
/// (invariance of a row's output in its batch), repeat (the same call twice, the same sequence twice), streams (calls
/// on several streams or threads at once), graph (calls captured into a CUDA graph and replayed), history (one process
/// interleaving both dtypes and many shapes).
enum class CheckClass : int {
  kRejection, kExtreme, kProperty, kWidths, kShapes, kDomain, kStages, kPdl, kBatch, kRepeat, kHistory, kStreams,
  kGraph,
  kBlocks,  ///< quantization ops only: block-level classes (midpoints, zero and subnormal blocks, NaN/Inf, amax edges)
  kLayout,  ///< quantization ops only: scale layouts, the swizzle and its padding cells, rows beyond one tile
};
inline constexpr CheckClass kAllCheckClasses[] = {
    CheckClass::kRejection, CheckClass::kExtreme, CheckClass::kProperty, CheckClass::kWidths, CheckClass::kShapes,
    CheckClass::kDomain,    CheckClass::kStages,  CheckClass::kPdl,      CheckClass::kBatch,  CheckClass::kRepeat,
    CheckClass::kStreams,   CheckClass::kGraph,   CheckClass::kHistory};
/// The classes of the quantization ops (quant_check_classes() in audit/quant_classes.h) that no elementwise op runs.
inline constexpr CheckClass kQuantOnlyCheckClasses[] = {CheckClass::kBlocks, CheckClass::kLayout};
/// "rejection", "extreme", "property", "widths", "shapes", "domain", "stages", "pdl", "batch", "repeat", "streams",
/// "graph", "history" (the order they run in), "blocks", "layout".
const char* check_class_name(CheckClass c);
/// Whether the class calls the subject at both dtypes in one process (history). The engine runs such classes after
/// every dtype's single-dtype classes, so that a bug one dtype's own classes see is reported by them first.
bool check_class_mixes_dtypes(CheckClass c);
std::optional<CheckClass> parse_check_class(const std::string& s);
/// "rejection, extreme, ..." for messages.
std::string check_class_list();

/// One shape of the `shapes` class: the op's output [rows, width].
struct Shape {
  int64_t rows = 0;
  int64_t width = 0;
  std::string why;  ///< where it comes from ("wan2.2 FFN up", "--shapes", "above 2^31 elements")
};

struct AuditOptions {
  // --- declared in the option table (audit_options.cpp), each with its command-line name and JSON key ---
  std::string op;                      ///< "" : the plugin's op
  std::string contract;                ///< "" : the contract the plugin claims
  std::string plugin;                  ///< empty: the built-in plugin of the op and backend
  std::string backend;                 ///< "cuda" or "emulated"; empty: from the plugin, else cuda when a device works
  std::string dtype = "all";           ///< "bf16", "fp16" or "all"
  std::string only;                    ///< run one class (reproduce commands use this)
  uint64_t seed = 20261130;
  std::string math_model;              ///< "" (by backend: emulated -> libm, cuda -> cuda), "libm", "cuda", "exact"
  uint32_t domain_biases = 0;          ///< second inputs in the domain class; 0: 65536 on CUDA, 1024 on the host
  /// A quantization op's stages class: tensor amaxes of the scale step (the element step takes a sixth as many global
  /// scales, or 4 times as many group amaxes); 0: 256 on CUDA (every global scale and group amax), 24 on the host.
  uint32_t stage_rows = 0;
  /// A quantization op's stages class also writes every input on which the subject and each other contract differ,
  /// one TSV file per contract and dtype, into this directory; empty: none.
  std::string differences;
  int64_t max_width = 0;               ///< every valid width up to this; 0: 65536 on CUDA, 16384 on the host
  uint32_t property_cases = 200;       ///< random shapes per dtype in the property class
  std::string shapes;                  ///< "ROWSxWIDTH,...", added to the shapes class's defaults
  std::string model;                   ///< a named catalogue of production shapes ("wan2.2")
  bool default_shapes = true;          ///< the class's own production envelope (off: only the user's shapes)
  uint64_t stop_after = 1000;          ///< a class stops after this many mismatches (0: never)
  uint32_t records = 8;                ///< mismatch lines kept per check
  int64_t pdl_delay_ms = 20;           ///< how late the PDL producer writes the inputs
  double call_timeout_s = 120;         ///< one call into the subject longer than this is a hang: FAIL
  bool isolate = true;                 ///< each class in a child process (off: in this process, for debugging)
  bool first_fail = false;             ///< skip the classes after the first failure (mutation runs on a budget)
  uint32_t lanes = 0;                  ///< dtypes audited side by side (isolated); 0: 2 on CUDA, 1 on the host
  bool profile = false;                ///< print each class's phases and this machine's copy and hash throughput
  /// On a CUDA subject, the widths, domain and stages classes make their calls in batches on the device and compare
  /// them there (KernelRunner::calls_compared); --host-compare clears it.
  bool device_compare = true;
  /// Isolated, each dtype's classes run in order in one child process (docs/AUDIT.md, Class groups);
  /// --class-children clears it.
  bool class_groups = true;
  std::string golden_dir;              ///< golden/ (default: the library's)
  std::string golden_build_dir;        ///< its unpacked archives
  std::string arch;                    ///< the golden architecture (default: the device's, else the only one)
  std::string scope = "default";       ///< a named set of the options above (scope_table()); given options win

  // --- resolved from the above by resolve_options() ---
  std::vector<ref::Dtype> dtypes;
  std::optional<CheckClass> only_class;
  std::vector<Shape> extra_shapes;     ///< --shapes and --model

  // --- set by the front end, not options ---
  /// Runs once the subject is loaded, before the classes, with the op it is judged as (the self-audit).
  std::function<void(const std::string& op, const std::string& contract)> on_described;
  std::string command;                 ///< the command line, for the report
};

/// One option of the table.
struct OptionDef {
  std::string flag;  ///< "--max-width"; a flag that clears a default-true bool is written "--no-..."
  std::string key;   ///< "max_width": the JSON key and the Python keyword
  std::string help;
  std::variant<std::string AuditOptions::*, uint64_t AuditOptions::*, uint32_t AuditOptions::*,
               int64_t AuditOptions::*, double AuditOptions::*, bool AuditOptions::*>
      field;
  long double min = 0, max = 0;  ///< the range of a number given on the command line or from Python (exact for
                                 ///< every 64-bit integer)
  bool min_open = false;     ///< (min, max] instead of [min, max]
  bool reproduce = true;     ///< part of a reproduce command when it differs from its default
  std::string alias{};       ///< an older name still accepted ("--tanh-model")
};

/// The table, in the order --help lists it.
const std::vector<OptionDef>& option_table();

/// A named audit scope: option values (keys of option_table(), as text) that `--scope NAME` sets where the command
/// line or the Python call did not give that option. The GPU runner and the docs name scopes instead of copying
/// option lists.
struct ScopeDef {
  std::string name;     ///< "quick", "mutant", "default", "envelope"
  std::string meaning;  ///< one line, for --help and docs/AUDIT.md
  std::vector<std::pair<std::string, std::string>> settings;  ///< {"max_width", "16384"}, {"first_fail", "true"}
};
/// Every scope, in the order --help lists them.
const std::vector<ScopeDef>& scope_table();
/// "quick, mutant, default, envelope".
std::string scope_list();
/// Sets o's options from its scope (o.scope), except the keys in `given`; throws UsageError on an unknown scope.
void apply_scope(AuditOptions& o, const std::vector<std::string>& given);

/// Registers every option of the table on `sub`, bound to `o`; numbers arrive as text in `numbers_text` (one slot per
/// table entry) and are checked by apply_cli_options, so that every refusal reads the same. `given` is set to a
/// function listing the keys given on the command line.
void add_options(CLI::App& sub, AuditOptions& o, std::vector<std::string>& numbers_text,
                 std::function<std::vector<std::string>()>* given);

/// Parses the numbers given on the command line into o (range-checked), then resolve_options; throws UsageError (one
/// line, "audit: --max-width must be an integer in [1, 1048576], got 0").
void apply_cli_options(AuditOptions& o, const std::vector<std::string>& numbers_text,
                       const std::vector<std::string>& given);

/// Resolves dtype, only, shapes and model into their fields and checks that the options leave every class something
/// to check; throws UsageError (one line).
void resolve_options(AuditOptions& o);

/// Parses "75600x13824,4096x5120"; throws UsageError (one line) on a malformed or non-positive entry.
std::vector<Shape> parse_shapes(const std::string& list);
/// A named catalogue of production shapes ("wan2.2"); throws UsageError naming the known ones.
std::vector<Shape> model_shapes(const std::string& model);

/// Every table option as JSON (the isolation protocol's spec, the reports).
nlohmann::json options_to_json(const AuditOptions& o);
/// The inverse; resolves the derived fields. Throws UsageError on a malformed spec.
AuditOptions options_from_json(const nlohmann::json& j);
/// Sets the options of a Python keyword dictionary, with the table's types and ranges; throws UsageError naming the
/// key (an unknown key, a wrong type, a value out of range).
void options_from_python(AuditOptions& o, const nlohmann::json& kwargs);

/// The value of a number option as text that set_option_number reads back to the same value (a reproduce line).
std::string option_number_text(const AuditOptions& o, const OptionDef& d);
/// Parses `text` as the number option `d` (its type and range) into `o`; throws UsageError (one line naming the flag,
/// the range and the text) when it is not one.
void set_option_number(AuditOptions& o, const OptionDef& d, const std::string& text);

/// " --flag value" for every reproducing option that differs from its default (skipping `except` keys).
std::string reproduce_options(const AuditOptions& o, const std::vector<std::string>& except = {});

/// The table for the Python front end: [{"key", "flag", "type": "int"|"float"|"str"|"bool", "default", "help"}].
nlohmann::json option_table_json();

}  // namespace fuseproof::audit
