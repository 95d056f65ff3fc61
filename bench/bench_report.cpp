// bench_report.cpp: console table and JSON of a benchmark run.
#include "bench/bench_report.h"

#include "common/atomic_file.h"

#include <algorithm>
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
          {"dist", r.dist},
          {"kernel", r.kernel},
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
  std::printf("\n%-12s %-5s %-10s %-24.24s %3s %-16s %10s %9s %10s %9s %8s %10s %8s %9s %9s %9s  %s\n", "shape", "dtype", "dist", "kernel", "vec", "math",
              "fused_us", "GB/s", "copy_us", "copyGB/s", "f/copy", "eager_us", "xeager", "g_pdl_us", "g_nopdl", "g_copy",
              "exact");
  for (const Row& r : rep.rows) {
    std::printf("%-12s %-5s %-10s %-24.24s %3d %-16s %10s %9s %10s %9s %8s %10s %8s %9s %9s %9s  %s%s%s\n", r.shape.c_str(),
                r.dtype.c_str(), r.dist.c_str(), r.kernel.c_str(), r.vector, r.math.c_str(), fmt("%.2f", r.fused_us).c_str(),
                fmt("%.0f", r.fused_gbs).c_str(), fmt("%.2f", r.copy_us).c_str(), fmt("%.0f", r.copy_gbs).c_str(),
                fmt("%.3f", r.fraction).c_str(), fmt("%.2f", r.eager_us).c_str(), fmt("%.2f", r.speedup).c_str(),
                fmt("%.2f", r.graph_pdl_us).c_str(), fmt("%.2f", r.graph_nopdl_us).c_str(),
                fmt("%.2f", r.graph_copy_us).c_str(), r.exact ? "exact" : "NOT EXACT",
                r.note.empty() ? "" : " ", r.note.c_str());
  }
  std::fflush(stdout);
}

std::string variant_label(const Row& r) {
  return r.kernel + " " + std::to_string(r.vector) + "B" + (r.math.empty() || r.math == "-" ? "" : " " + r.math);
}

std::vector<WorstCase> worst_cases(const Report& rep) {
  const bool emulated = rep.backend == "emulated";
  std::vector<WorstCase> out;
  for (const Row& r : rep.rows) {
    const std::string v = variant_label(r);
    auto it = std::find_if(out.begin(), out.end(), [&](const WorstCase& w) {
      return w.shape == r.shape && w.dtype == r.dtype && w.variant == v;
    });
    if (it == out.end()) {
      WorstCase w;
      w.shape = r.shape, w.dtype = r.dtype, w.variant = v, w.rows = r.rows, w.width = r.width;
      out.push_back(w);
      it = out.end() - 1;
    }
    const double f = emulated ? r.fused_gbs : r.fraction;
    ++it->dists;
    if (!r.exact) {
      // A distribution on which the variant is not exact is its worst case, whatever the others measured.
      if (it->exact) it->dist = r.dist, it->fraction = it->speedup = NAN;
      it->exact = false;
      continue;
    }
    if (it->exact && (std::isnan(it->fraction) || f < it->fraction)) {
      it->fraction = f;
      it->speedup = r.speedup;
      it->dist = r.dist;
    }
  }
  return out;
}

void print_worst_cases(const Report& rep) {
  const bool emulated = rep.backend == "emulated";
  std::printf("\nWorst case over distributions (%s):\n%-12s %-5s %-44s %-10s %9s %8s %5s\n",
              emulated ? "Melem/s" : "fused/copy", "shape", "dtype", "variant", "worst", emulated ? "Melem/s" : "f/copy",
              "xeager", "dists");
  for (const WorstCase& w : worst_cases(rep))
    std::printf("%-12s %-5s %-44.44s %-10s %9s %8s %5d%s\n", w.shape.c_str(), w.dtype.c_str(), w.variant.c_str(),
                w.dist.c_str(), fmt(emulated ? "%.1f" : "%.3f", w.fraction).c_str(), fmt("%.2f", w.speedup).c_str(),
                w.dists, w.exact ? "" : "  NOT EXACT");
  std::fflush(stdout);
}

nlohmann::json report_json(const Report& rep) {
  nlohmann::json j = {{"backend", rep.backend}, {"machine", rep.machine}, {"settings", rep.settings}};
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  j["worst_cases"] = nlohmann::json::array();
  for (const WorstCase& w : worst_cases(rep))
    j["worst_cases"].push_back({{"shape", w.shape}, {"rows", w.rows}, {"width", w.width}, {"dtype", w.dtype},
                                {"variant", w.variant}, {"dist", w.dist}, {"worst", num(w.fraction)},
                                {"speedup_vs_eager", num(w.speedup)}, {"dists", w.dists}, {"exact", w.exact}});
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
