// bench_report.cpp: console table and JSON of a benchmark run.
#include "bench/bench_report.h"

#include "common/atomic_file.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace fuseproof::bench {

namespace {

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

nlohmann::json row_json(const Row& r) {
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"shape", r.shape},
          {"rows", r.rows},
          {"width", r.width},
          {"dtype", r.dtype},
          {"vector_bytes", r.vector},
          {"math", r.math},
          {"exact", r.exact},
          {"mismatches", r.mismatches},
          {"fused_us", num(r.fused_us)},
          {"fused_GBps", num(r.fused_gbs)},
          {"copy_us", num(r.copy_us)},
          {"copy_GBps", num(r.copy_gbs)},
          {"fused_over_copy", num(r.fraction)},
          {"eager_us", num(r.eager_us)},
          {"speedup_vs_eager", num(r.speedup)},
          {"graph_fused_pdl_us", num(r.graph_pdl_us)},
          {"graph_fused_nopdl_us", num(r.graph_nopdl_us)},
          {"graph_copy_us", num(r.graph_copy_us)},
          {"note", r.note}};
}

}  // namespace

Row variant_row(const std::string& shape, int64_t rows, int64_t width, const std::string& dtype, int vector,
                const std::string& math) {
  Row r;
  r.shape = shape;
  r.rows = rows;
  r.width = width;
  r.dtype = dtype;
  r.vector = vector;
  r.math = math;
  return r;
}

void print_table(const Report& rep) {
  std::printf("\n%-12s %-5s %3s %-16s %10s %9s %10s %9s %8s %10s %8s %9s %9s %9s  %s\n", "shape", "dtype", "vec", "math",
              "fused_us", "GB/s", "copy_us", "copyGB/s", "f/copy", "eager_us", "xeager", "g_pdl_us", "g_nopdl", "g_copy",
              "exact");
  for (const Row& r : rep.rows) {
    std::printf("%-12s %-5s %3d %-16s %10s %9s %10s %9s %8s %10s %8s %9s %9s %9s  %s%s%s\n", r.shape.c_str(),
                r.dtype.c_str(), r.vector, r.math.c_str(), fmt("%.2f", r.fused_us).c_str(),
                fmt("%.0f", r.fused_gbs).c_str(), fmt("%.2f", r.copy_us).c_str(), fmt("%.0f", r.copy_gbs).c_str(),
                fmt("%.3f", r.fraction).c_str(), fmt("%.2f", r.eager_us).c_str(), fmt("%.2f", r.speedup).c_str(),
                fmt("%.2f", r.graph_pdl_us).c_str(), fmt("%.2f", r.graph_nopdl_us).c_str(),
                fmt("%.2f", r.graph_copy_us).c_str(), r.exact ? "exact" : "NOT EXACT",
                r.note.empty() ? "" : " ", r.note.c_str());
  }
  std::fflush(stdout);
}

nlohmann::json report_json(const Report& rep) {
  nlohmann::json j = {{"backend", rep.backend}, {"machine", rep.machine}, {"settings", rep.settings}};
  j["results"] = nlohmann::json::array();
  for (const Row& r : rep.rows) j["results"].push_back(row_json(r));
  return j;
}

void write_json(const Report& rep, const std::string& path) {
  try {
    write_file_atomically(path, report_json(rep).dump(2) + "\n");  // a killed run leaves the previous file intact
  } catch (const std::exception& e) {
    throw std::runtime_error("bench: --json must name a writable file, got " + path + " (" + e.what() + ")");
  }
}

}  // namespace fuseproof::bench
