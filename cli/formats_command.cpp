// formats_command.cpp: the reference's narrow-format casts over all 2^32 binary32 inputs, as tree digests.
#include "cli/formats_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/cli_exit.h"
#include "common/tree_digest.h"
#include "reference/format_cast.h"

namespace fuseproof::cli {

namespace {

struct FormatsArgs {
  std::string format = "all";
  std::string overflow;
  std::string rows = "0:65536";
  std::string out;
  unsigned threads = 0;
  bool json = false;
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

std::vector<ref::FormatCast> selected(const FormatsArgs& a) {
  if (!a.overflow.empty() && a.format == "e2m1")
    fail_with("formats: --overflow applies to --format e4m3 (or all), got --overflow " + a.overflow + " with e2m1");
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

/// The rows' bytes in order, for --out: the input of a second hasher (the capture script's tree code).
void write_rows(const std::string& path, ref::FormatCast cast, RowRange rows) {
  AtomicFile f(path);
  std::vector<uint8_t> row(65536);
  for (uint32_t r = rows.first; r < rows.end; ++r) {
    ref::format_cast_row(cast, uint16_t(r), row.data());
    f.write(row.data(), row.size());
  }
  f.commit();
}

int run(const FormatsArgs& a) {
  const RowRange rows = parse_rows(a.rows);
  const std::vector<ref::FormatCast> casts = selected(a);
  if (!a.out.empty() && casts.size() != 1)
    fail_with("formats: --out needs exactly one cast (--format e2m1, or e4m3 with --overflow), got " +
              std::to_string(casts.size()));
  SweepOptions options;
  options.threads = a.threads;
  options.bias_first = rows.first;
  options.bias_count = rows.end - rows.first;
  nlohmann::ordered_json digests;
  for (ref::FormatCast c : casts) {
    const std::string tree =
        sweep_tree_digest_bytes([c](uint16_t r, uint8_t* out) { ref::format_cast_row(c, r, out); }, options);
    digests[ref::format_cast_name(c)] = tree;
    if (!a.json)
      std::printf("%s tree %s (rows %u:%u, %llu inputs)\n", ref::format_cast_name(c), tree.c_str(), rows.first,
                  rows.end, (unsigned long long)(rows.end - rows.first) << 16);
  }
  if (a.json) {
    nlohmann::ordered_json j;
    j["rows"] = std::to_string(rows.first) + ":" + std::to_string(rows.end);
    j["layout"] = "row r: binary32 patterns (r << 16) | lo, lo = 0..65535, one output byte each; "
                  "tree = SHA-256 of the rows' hex SHA-256s in row order";
    j["tree"] = digests;
    std::printf("%s\n", j.dump(2).c_str());
  }
  if (!a.out.empty()) write_rows(a.out, casts.front(), rows);
  return kExitPass;
}

}  // namespace

void add_formats_command(CLI::App& app) {
  auto args = std::make_shared<FormatsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "formats", "Tree digests of the reference's narrow-format casts (E4M3, E2M1) over every binary32 input");
  cmd->add_option("--format", args->format, "e4m3, e2m1 or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "e4m3", "e2m1"}));
  cmd->add_option("--overflow", args->overflow, "E4M3 overflow convention: saturate (__NV_SATFINITE) or nan (torch)")
      ->check(CLI::IsMember({"saturate", "nan"}));
  cmd->add_option("--rows", args->rows, "rows FIRST:END (row r = binary32 patterns r << 16 .. + 0xFFFF)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "worker threads (0 = all hardware threads)")->capture_default_str();
  cmd->add_flag("--json", args->json, "print the digests as JSON");
  cmd->add_option("--out", args->out, "also write the rows' output bytes, in order, to FILE (one cast only)");
  cmd->final_callback([args] { throw CLI::RuntimeError(run(*args)); });
}

}  // namespace fuseproof::cli
