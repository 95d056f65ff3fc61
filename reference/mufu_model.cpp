// mufu_model.cpp: table-driven MUFU.EX2 / MUFU.RCP with exact power-of-two scaling, and captured ex2 points.
#include "mufu_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "dtype.h"

namespace fuseproof::ref {

namespace {
constexpr uint32_t kOne = 0x3F800000u;
constexpr size_t kEntries = size_t(1) << 23;

std::vector<uint32_t> read_u32_file(const std::string& path, size_t entries, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("mufu model: cannot open " + path + " (configure with cmake to unpack golden/<arch>/*.tar.xz)");
  std::vector<uint32_t> t(entries);
  in.read(reinterpret_cast<char*>(t.data()), std::streamsize(entries * 4));
  if (in.gcount() != std::streamsize(entries * 4) || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error(std::string("mufu model: ") + path + " must hold exactly " + what);
  return t;  // the build machines are little-endian x86-64, as is the capture format
}

const std::vector<std::pair<uint32_t, uint32_t>> kNoPoints;
}  // namespace

MufuModel MufuModel::load(const std::string& dir) {
  MufuModel m;
  m.dir_ = dir;
  m.ex2_ = read_u32_file(dir + "/mufu_ex2_approx_ftz.bin", kEntries, "2^23 little-endian uint32 entries");
  std::string why;
  auto table = RcpApproxTable::from_results(
      read_u32_file(dir + "/mufu_rcp_approx_ftz.bin", kEntries, "2^23 little-endian uint32 entries"), &why);
  if (!table) throw std::runtime_error("mufu model: " + dir + "/mufu_rcp_approx_ftz.bin: " + why);
  m.rcp_table_ = std::make_shared<const RcpApproxTable>(std::move(*table));
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ex2_", 0) == 0 && e.path().extension() == ".bin") files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    const auto raw = read_u32_file(dir + "/" + f, 2 * 65536, "65536 (argument, result) pairs of little-endian uint32");
    std::vector<std::pair<uint32_t, uint32_t>> pts(65536);
    for (size_t i = 0; i < 65536; ++i) pts[i] = {raw[2 * i], raw[2 * i + 1]};
    m.points_.insert(m.points_.end(), pts.begin(), pts.end());
    m.point_sets_.emplace_back(f.substr(4, f.size() - 8), std::move(pts));
  }
  std::sort(m.points_.begin(), m.points_.end());
  // The same argument captured twice must have given the same result (the unit is deterministic).
  for (size_t i = 1; i < m.points_.size(); ++i)
    if (m.points_[i].first == m.points_[i - 1].first && m.points_[i].second != m.points_[i - 1].second) {
      char b[160];
      std::snprintf(b, sizeof b, "mufu model: ex2 point 0x%08X has two captured results (0x%08X, 0x%08X) in %s",
                    m.points_[i].first, m.points_[i - 1].second, m.points_[i].second, dir.c_str());
      throw std::runtime_error(b);
    }
  m.points_.erase(std::unique(m.points_.begin(), m.points_.end()), m.points_.end());
  return m;
}

float MufuModel::ex2_approx_ftz(float x) const {
  if (std::isnan(x)) return f32_from_bits(0x7FFFFFFFu);  // NaN in, NaN out (no point to look up: payloads vary)
  // .ftz: a subnormal argument is flushed to a zero of its sign before the unit sees it.
  if (x != 0.0f && std::fabs(x) < 0x1p-126f) x = std::copysign(0.0f, x);
  if (x >= 1.0f && x < 32.0f) {
    const float i = std::floor(x);
    const float one_plus_f = (x - i) + 1.0f;  // exact: x >= 1 has at most 23 fraction bits, fewer as x grows
    const uint32_t out = ex2_[f32_bits(one_plus_f) - kOne];
    return f32_from_bits(out + (uint32_t(int(i) - 1) << 23));  // times 2^(i-1): exponent field only
  }
  const uint32_t u = f32_bits(x);
  const auto it = std::lower_bound(points_.begin(), points_.end(), std::make_pair(u, uint32_t(0)));
  if (it == points_.end() || it->first != u) {
    char b[128];
    std::snprintf(b, sizeof b, "mufu model: ex2 argument 0x%08X lies outside [1, 32) and was not captured", u);
    throw std::domain_error(b);
  }
  return f32_from_bits(it->second);
}

float MufuModel::rcp_approx_ftz(float d) const {
  if (!(d >= 1.0f && d < 134217728.0f)) throw std::domain_error("mufu model: rcp input outside [1, 2^27)");
  return ref::rcp_approx_ftz(d, *rcp_table_);  // the table's result for the mantissa, times 2^-exponent
}

const std::vector<std::pair<uint32_t, uint32_t>>& MufuModel::ex2_points(const std::string& name) const {
  for (const auto& [n, p] : point_sets_)
    if (n == name) return p;
  return kNoPoints;
}

bool MufuModel::has_ex2_points(const std::string& name) const { return !ex2_points(name).empty(); }

std::vector<std::string> MufuModel::ex2_point_sets() const {
  std::vector<std::string> v;
  for (const auto& ps : point_sets_) v.push_back(ps.first);
  return v;
}

}  // namespace fuseproof::ref
