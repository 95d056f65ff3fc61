// ffn_capture.cpp: the FFN pre-activation capture (raw little-endian files and their manifest).
#include "ffn_capture.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"

namespace fuseproof::e2e {

namespace {

std::atomic<bool> g_captured{false};

void write_raw16(const std::string& path, const uint16_t* p, int64_t n) {
  std::vector<unsigned char> bytes(static_cast<size_t>(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    bytes[size_t(2 * i)] = uint8_t(p[i] & 0xFF);  // little-endian whatever the host
    bytes[size_t(2 * i + 1)] = uint8_t(p[i] >> 8);
  }
  try {
    write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("e2e: ") + kCaptureFfnEnv + " must name a writable folder: " + e.what());
  }
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
  try {
    write_file_atomically(dir + "/ffn_capture.json", j.dump(2) + "\n");
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("e2e: ") + kCaptureFfnEnv + " must name a writable folder: " + e.what());
  }
  std::fprintf(stderr, "e2e: captured %s inputs (%lld x %lld %s) into %s\n", site.c_str(), (long long)rows,
               (long long)width, dtype.c_str(), dir.c_str());
}

}  // namespace fuseproof::e2e
