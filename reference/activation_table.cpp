// activation_table.cpp: tabulating activations and reading/writing table files.
#include "activation_table.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "half_codec.h"

namespace fuseproof::ref {

std::vector<uint16_t> activation_table(Activation a, Dtype d, const MathConfig& cfg) {
  std::vector<uint16_t> t(kPatterns);
  for (size_t i = 0; i < kPatterns; ++i)
    t[i] = f32_to_half(d, activation_f32(a, half_to_f32(d, uint16_t(i)), cfg), cfg.nan);
  return t;
}

std::vector<uint32_t> activation_table_f32(Activation a, Dtype d, const MathConfig& cfg) {
  std::vector<uint32_t> t(kPatterns);
  for (size_t i = 0; i < kPatterns; ++i) t[i] = f32_bits(activation_f32(a, half_to_f32(d, uint16_t(i)), cfg));
  return t;
}

namespace {
template <class T>
std::vector<T> read_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open table " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> raw(kPatterns * sizeof(T));
  in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size()));
  if (in.gcount() != std::streamsize(raw.size()) || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error("table " + path + " must hold exactly 65536 little-endian uint" +
                             std::to_string(8 * sizeof(T)) + " entries (" + std::to_string(raw.size()) + " bytes)");
  std::vector<T> t(kPatterns);
  for (size_t i = 0; i < kPatterns; ++i) {
    T v = 0;
    for (size_t k = 0; k < sizeof(T); ++k) v = T(v | (T(raw[sizeof(T) * i + k]) << (8 * k)));
    t[i] = v;
  }
  return t;
}

template <class T>
std::string table_bytes(const std::vector<T>& table) {
  std::string raw(table.size() * sizeof(T), '\0');
  for (size_t i = 0; i < table.size(); ++i)
    for (size_t k = 0; k < sizeof(T); ++k) raw[sizeof(T) * i + k] = char((table[i] >> (8 * k)) & 0xFF);
  return raw;
}
}  // namespace

std::vector<uint16_t> read_u16_table(const std::string& path) { return read_table<uint16_t>(path); }
std::vector<uint32_t> read_u32_table(const std::string& path) { return read_table<uint32_t>(path); }
std::string u16_table_bytes(const std::vector<uint16_t>& table) { return table_bytes(table); }
std::string u32_table_bytes(const std::vector<uint32_t>& table) { return table_bytes(table); }

}  // namespace fuseproof::ref
