// ffn_capture.cpp: the FFN pre-activation capture (raw little-endian files and their manifest).
#include "ffn_capture.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

namespace fuseproof::e2e {

namespace {

std::atomic<bool> g_captured{false};

void write_raw16(const std::string& path, const uint16_t* p, int64_t n) {
  std::vector<unsigned char> bytes(static_cast<size_t>(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    bytes[size_t(2 * i)] = uint8_t(p[i] & 0xFF);  // little-endian whatever the host
    bytes[size_t(2 * i + 1)] = uint8_t(p[i] >> 8);
  }
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  f.close();
  if (!f) throw std::runtime_error(std::string("e2e: ") + kCaptureFfnEnv + " must name a writable folder, cannot write " + path);
}

}  // namespace

bool ffn_capture_pending() {
  const char* d = std::getenv(kCaptureFfnEnv);
  return d && *d && !g_captured.load();
}

void capture_ffn_site(const std::string& site, const std::string& dtype, const uint16_t* x, int64_t rows, int64_t width,
                      const uint16_t* bias) {
  const std::string dir = std::getenv(kCaptureFfnEnv);
  g_captured = true;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  write_raw16(dir + "/ffn_x.bin", x, rows * width);
  write_raw16(dir + "/ffn_bias.bin", bias, width);
  const nlohmann::json j = {{"site", site}, {"dtype", dtype}, {"rows", rows}, {"width", width},
                            {"x", "ffn_x.bin"}, {"bias", "ffn_bias.bin"},
                            {"what", "inputs of the fused bias + GELU(tanh) at the first FFN site, first call"}};
  std::ofstream f(dir + "/ffn_capture.json");
  f << j.dump(2) << "\n";
  f.close();
  if (!f) throw std::runtime_error(std::string("e2e: ") + kCaptureFfnEnv + " must name a writable folder, got " + dir);
  std::fprintf(stderr, "e2e: captured %s inputs (%lld x %lld %s) into %s\n", site.c_str(), (long long)rows,
               (long long)width, dtype.c_str(), dir.c_str());
}

}  // namespace fuseproof::e2e
