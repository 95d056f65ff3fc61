// bench_report.h: one benchmark run's results: rows, the console table, and bench.json (scripts/perf_table.py
// renders the Markdown tables of docs/PERFORMANCE.md from it).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fuseproof::bench {

/// One result row; times in microseconds, NaN where not measured.
struct Row {
  std::string shape, dtype, math;
  std::string dist;              ///< input distribution (input_distribution.h)
  std::string kernel = "built-in";  ///< "built-in", or a plugin's kernel_name
  int64_t rows = 0, width = 0;
  int vector = 16;
  double fused_us = NAN, fused_gbs = NAN, copy_us = NAN, copy_gbs = NAN, fraction = NAN, eager_us = NAN,
         speedup = NAN;
  double graph_pdl_us = NAN, graph_nopdl_us = NAN, graph_copy_us = NAN;
  bool exact = false;
  int64_t mismatches = -1;
  std::string note;
};

/// A row naming one variant (shape, dtype, vector bytes, GELU math), nothing measured yet.
Row variant_row(const std::string& shape, int64_t rows, int64_t width, const std::string& dtype, int vector,
                const std::string& math);

struct Report {
  std::string backend;  ///< "cuda" or "emulated"
  nlohmann::json machine;
  nlohmann::json settings;
  std::vector<Row> rows;
};

/// The rows as a fixed-width table on stdout.
void print_table(const Report& rep);

/// The worst case over distributions of one variant (kernel, vector, math) at one shape and dtype.
struct WorstCase {
  std::string shape, dtype, variant, dist;
  int64_t rows = 0, width = 0;
  double fraction = NAN, speedup = NAN;  ///< fused/copy and x eager in the worst distribution
  int dists = 0;                         ///< distributions measured
  bool exact = true;                     ///< every distribution exact (a non-exact one is the worst case)
};

/// "built-in 16B table-range-bulk" or the plugin's kernel name and vector bytes.
std::string variant_label(const Row& r);

/// Per shape x dtype x variant, the distribution with the lowest fused/copy (CUDA) or Melem/s (emulated).
std::vector<WorstCase> worst_cases(const Report& rep);

/// The worst cases as a table on stdout (printed before the full table: the headline figure).
void print_worst_cases(const Report& rep);

/// bench.json: {backend, machine, settings, worst_cases: [...], results: [row...]}; NaN becomes null.
nlohmann::json report_json(const Report& rep);
/// Writes report_json to `path`; throws std::runtime_error (one line) when it cannot.
void write_json(const Report& rep, const std::string& path);

}  // namespace fuseproof::bench
