// mufu_model.cpp: table-driven MUFU.EX2 / MUFU.RCP with exact power-of-two scaling.
#include "mufu_model.h"

#include <cmath>
#include <fstream>
#include <stdexcept>

#include "dtype.h"

namespace fuseproof::ref {

namespace {
constexpr uint32_t kOne = 0x3F800000u;
constexpr size_t kEntries = size_t(1) << 23;

std::vector<uint32_t> read_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("mufu model: cannot open " + path + " (configure with cmake to unpack golden/<arch>/mufu_tables.tar.xz)");
  std::vector<uint32_t> t(kEntries);
  in.read(reinterpret_cast<char*>(t.data()), std::streamsize(kEntries * 4));
  if (in.gcount() != std::streamsize(kEntries * 4) || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error("mufu model: " + path + " must hold exactly 2^23 little-endian uint32 entries");
  return t;  // the build machines are little-endian x86-64, as is the capture format
}
}  // namespace

MufuModel MufuModel::load(const std::string& dir) {
  MufuModel m;
  m.dir_ = dir;
  m.ex2_ = read_table(dir + "/mufu_ex2_approx_ftz.bin");
  m.rcp_ = read_table(dir + "/mufu_rcp_approx_ftz.bin");
  return m;
}

float MufuModel::ex2_approx_ftz(float x) const {
  if (!(x >= 1.0f && x < 32.0f)) throw std::domain_error("mufu model: ex2 input outside [1, 32)");
  const float i = std::floor(x);
  const float one_plus_f = (x - i) + 1.0f;  // exact: x >= 1 has at most 23 fraction bits, fewer as x grows
  const uint32_t out = ex2_[f32_bits(one_plus_f) - kOne];
  return f32_from_bits(out + (uint32_t(int(i) - 1) << 23));  // times 2^(i-1): exponent field only
}

float MufuModel::rcp_approx_ftz(float d) const {
  if (!(d >= 1.0f && d < 134217728.0f)) throw std::domain_error("mufu model: rcp input outside [1, 2^27)");
  const uint32_t u = f32_bits(d);
  const uint32_t k = (u >> 23) - 127u;
  const uint32_t out = rcp_[u & 0x7FFFFFu];
  return f32_from_bits(out - (k << 23));  // times 2^-k
}

}  // namespace fuseproof::ref
