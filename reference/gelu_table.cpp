// gelu_table.cpp: tabulating GELU and reading/writing table files.
#include "gelu_table.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace fuseproof::ref {

std::vector<uint16_t> gelu_tanh_table(Dtype d, const GeluConfig& cfg) {
  std::vector<uint16_t> t(kPatterns);
  for (size_t i = 0; i < kPatterns; ++i) t[i] = gelu_tanh_eager(d, uint16_t(i), cfg);
  return t;
}

std::vector<uint16_t> read_u16_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open table " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> raw(kPatterns * 2);
  in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size()));
  if (in.gcount() != std::streamsize(raw.size()) || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error("table " + path + " must hold exactly 65536 little-endian uint16 entries (131072 bytes)");
  std::vector<uint16_t> t(kPatterns);
  for (size_t i = 0; i < kPatterns; ++i) t[i] = uint16_t(raw[2 * i] | (raw[2 * i + 1] << 8));
  return t;
}

std::string u16_table_bytes(const std::vector<uint16_t>& table) {
  std::string raw(table.size() * 2, '\0');
  for (size_t i = 0; i < table.size(); ++i) {
    raw[2 * i] = char(table[i] & 0xFF);
    raw[2 * i + 1] = char(table[i] >> 8);
  }
  return raw;
}

}  // namespace fuseproof::ref
