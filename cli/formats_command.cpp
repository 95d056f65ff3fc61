// formats_command.cpp: the reference's narrow-format casts and its rcp.approx.ftz model over all 2^32 binary32
// inputs, as tree digests.
#include "cli/formats_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/cli_exit.h"
#include "common/exit_status.h"
#include "common/golden_library.h"
#include "common/rcp_table_file.h"
#include "common/tree_digest.h"
#include "reference/format_cast.h"
#include "reference/rcp_approx_model.h"

namespace fuseproof::cli {

namespace {

struct FormatsArgs {
  std::string format = "all";
  std::string overflow;
  std::string rows = "0:65536";
  std::string out;
  std::string rcp_table;
  unsigned threads = 0;
  bool json = false;
  bool check_golden = false;
};

struct RowRange {
  uint32_t first, end;
};

/// "A:B", each decimal or 0x-hex, 0 <= A < B <= 65536.
RowRange parse_rows(const std::string& s) {
  const std::string why = "formats: --rows must be FIRST:END with 0 <= FIRST < END <= 65536, got " + s;
  const size_t colon = s.find(':');
  if (colon == std::string::npos) fail_with(why);
  auto number = [&](const std::string& t) -> uint32_t {
    if (t.empty()) fail_with(why);
    size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(t, &used, 0);
    } catch (const std::exception&) {
      fail_with(why);
    }
    if (used != t.size() || v > 65536) fail_with(why);
    return uint32_t(v);
  };
  const RowRange r{number(s.substr(0, colon)), number(s.substr(colon + 1))};
  if (r.first >= r.end) fail_with(why);
  return r;
}

constexpr const char* kRcpName = "rcp-approx-ftz";
constexpr const char* kLayout =
    "row r: binary32 patterns (r << 16) | lo, lo = 0..65535, bytes_per_output[cast] output bytes each "
    "(little-endian); tree = SHA-256 of the rows' hex SHA-256s in row order";

/// One digest the command computes: its name, its row width and its row function.
struct Digest {
  std::string name;
  size_t bytes_per_output;
  ByteRowFn row;
};

std::vector<ref::FormatCast> selected_casts(const FormatsArgs& a) {
  if (!a.overflow.empty() && a.format != "all" && a.format != "e4m3")
    fail_with("formats: --overflow applies to --format e4m3 (or all), got --overflow " + a.overflow + " with " +
              a.format);
  std::vector<ref::FormatCast> casts;
  for (ref::FormatCast c : ref::kAllFormatCasts) {
    const bool e4m3 = c != ref::FormatCast::kE2m1;
    if (a.format != "all" && a.format != (e4m3 ? "e4m3" : "e2m1")) continue;
    if (e4m3 && !a.overflow.empty() && a.overflow != (c == ref::FormatCast::kE4m3Saturate ? "saturate" : "nan"))
      continue;
    if (!e4m3 && !a.overflow.empty()) continue;  // --format all --overflow X: the E4M3 convention X alone
    casts.push_back(c);
  }
  return casts;
}

/// The digests asked for. rcp-approx-ftz takes the device's table from --rcp-table FILE (another architecture's
/// capture), else from the golden MUFU capture (GoldenArch::mufu().rcp_table(), the table eval's rcp-approx contract
/// uses). Asked for by name, missing golden data is exit 3; under --format all it is left out and `not_computable`
/// says why (the caller prints it).
std::vector<Digest> selected(const FormatsArgs& a, std::string& not_computable) {
  std::vector<Digest> digests;
  for (ref::FormatCast c : selected_casts(a))
    digests.push_back(
        {ref::format_cast_name(c), 1, [c](uint16_t r, uint8_t* out) { ref::format_cast_row(c, r, out); }});
  const bool rcp = a.format == kRcpName || (a.format == "all" && a.overflow.empty());
  if (!a.rcp_table.empty() && !rcp)
    fail_with("formats: --rcp-table applies to --format rcp-approx-ftz (or all without --overflow), got --format " +
              a.format + (a.overflow.empty() ? "" : " --overflow " + a.overflow));
  if (!rcp) return digests;
  std::shared_ptr<const ref::RcpApproxTable> table;
  if (!a.rcp_table.empty()) {
    table = std::make_shared<const ref::RcpApproxTable>(read_rcp_approx_table_file(a.rcp_table, "--rcp-table"));
  } else {
    try {
      const GoldenArch g(default_golden_dir(), default_golden_build_dir(),
                         resolve_golden_arch(default_golden_dir(), "", ""));
      table = std::make_shared<const ref::RcpApproxTable>(g.mufu().rcp_table());
    } catch (const MissingDataError& e) {
      if (a.format == kRcpName) throw;
      not_computable = std::string("no --rcp-table FILE and no golden MUFU capture: ") + e.what();
      return digests;
    }
  }
  digests.push_back({kRcpName, 4, [table](uint16_t r, uint8_t* out) { ref::rcp_approx_ftz_row(*table, r, out); }});
  return digests;
}

/// The rows' bytes in order, for --out: the input of a second hasher (the capture script's tree code).
void write_rows(const std::string& path, const Digest& d, RowRange rows) {
  AtomicFile f(path);
  std::vector<uint8_t> row(65536 * d.bytes_per_output);
  for (uint32_t r = rows.first; r < rows.end; ++r) {
    d.row(uint16_t(r), row.data());
    f.write(row.data(), row.size());
  }
  f.commit();
}

int run(const FormatsArgs& a) {
  const RowRange rows = parse_rows(a.rows);
  std::string not_computable;
  const std::vector<Digest> digests = selected(a, not_computable);
  if (!a.out.empty() && (digests.size() != 1 || !not_computable.empty()))
    fail_with("formats: --out needs exactly one cast (--format e2m1, rcp-approx-ftz, or e4m3 with --overflow), got " +
              std::to_string(digests.size() + !not_computable.empty()));
  SweepOptions options;
  options.threads = a.threads;
  options.bias_first = rows.first;
  options.bias_count = rows.end - rows.first;
  // --check-golden: the device's digests first, so that missing evidence stops the command before the sweep.
  std::vector<std::string> want(digests.size());
  std::string label;
  if (a.check_golden) {
    if (rows.first != 0 || rows.end != 65536)
      fail_with("formats: --check-golden compares whole-domain digests: --rows must be 0:65536, got " + a.rows);
    const GoldenArch g(default_golden_dir(), default_golden_build_dir(),
                       resolve_golden_arch(default_golden_dir(), "", ""));
    label = g.label();
    for (size_t i = 0; i < digests.size(); ++i) {
      const auto v = read_golden_format_digest(g.path("digests.json"), digests[i].name);
      if (!v)
        throw MissingDataError(g.path("digests.json") + " has no format." + digests[i].name +
                               "_tree (scripts/capture_golden.py --add-formats)");
      want[i] = *v;
    }
  }
  int code = kExitPass;
  nlohmann::ordered_json trees, widths, golden;
  for (size_t i = 0; i < digests.size(); ++i) {
    const Digest& d = digests[i];
    const std::string tree = sweep_tree_digest_bytes(d.row, options, d.bytes_per_output);
    trees[d.name] = tree;
    widths[d.name] = d.bytes_per_output;
    if (!a.json)
      std::printf("%s tree %s (rows %u:%u, %llu inputs)\n", d.name.c_str(), tree.c_str(), rows.first, rows.end,
                  (unsigned long long)(rows.end - rows.first) << 16);
    if (a.check_golden) {
      const bool equal = tree == want[i];
      if (!equal) code = kExitFail;
      golden[d.name] = equal ? "equal" : "differs: " + want[i];
      if (!a.json)
        std::printf("%s %s %s/digests.json format.%s_tree%s\n", d.name.c_str(), equal ? "equals" : "DIFFERS from",
                    label.c_str(), d.name.c_str(), equal ? "" : (" (" + want[i] + ")").c_str());
    }
  }
  if (!not_computable.empty() && !a.json) std::printf("%s not computable: %s\n", kRcpName, not_computable.c_str());
  if (a.json) {
    nlohmann::ordered_json j;
    j["rows"] = std::to_string(rows.first) + ":" + std::to_string(rows.end);
    j["layout"] = kLayout;
    j["bytes_per_output"] = widths;
    j["tree"] = trees;
    if (!not_computable.empty()) j["not_computable"][kRcpName] = not_computable;
    if (a.check_golden) j["golden"] = {{"label", label}, {"digests", golden}};
    std::printf("%s\n", j.dump(2).c_str());
  }
  if (!a.out.empty()) write_rows(a.out, digests.front(), rows);
  return code;
}

}  // namespace

void add_formats_command(CLI::App& app) {
  auto args = std::make_shared<FormatsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "formats",
      "Tree digests of the reference's narrow-format casts (E4M3, E2M1) and rcp.approx.ftz over every binary32 input");
  cmd->add_option("--format", args->format, "e4m3, e2m1, rcp-approx-ftz or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "e4m3", "e2m1", "rcp-approx-ftz"}));
  cmd->add_option("--overflow", args->overflow, "E4M3 overflow convention: saturate (__NV_SATFINITE) or nan (torch)")
      ->check(CLI::IsMember({"saturate", "nan"}));
  cmd->add_option("--rows", args->rows, "rows FIRST:END (row r = binary32 patterns r << 16 .. + 0xFFFF)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "worker threads (0 = all hardware threads)")->capture_default_str();
  cmd->add_option("--rcp-table", args->rcp_table,
                  "rcp.approx.ftz's table of [1, 2) captured on the device (scripts/capture_formats.py --rcp-table)");
  cmd->add_flag("--json", args->json, "print the digests as JSON");
  cmd->add_flag("--check-golden", args->check_golden,
                "compare each digest with the device's in golden/<arch>/digests.json (format.<cast>_tree): exit 1 "
                "when one differs, 3 when the golden digest is missing");
  cmd->add_option("--out", args->out, "also write the rows' output bytes, in order, to FILE (one cast only)");
  cmd->final_callback([args] { throw CLI::RuntimeError(run(*args)); });
}

}  // namespace fuseproof::cli
