// fuzz_golden_table.cpp: the golden GELU table loaders on any file: reference/activation_table.h read_u16_table, and
// audit/golden_store.h read_golden_gelu_table with the input signed into a valid provenance (so that the size check
// after verification is reached). Exactly 131,072 bytes load, little-endian; anything else is refused in one line.
#include <stdlib.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/golden_store.h"
#include "common/sha256.h"
#include "fuzz/fuzz_input.h"
#include "reference/activation_table.h"

namespace {

std::string g_golden_dir;

void check_table(const std::vector<uint16_t>& table, const uint8_t* data, size_t size) {
  if (size != 131072 || table.size() != 65536) __builtin_trap();  // a wrong size must be refused
  for (size_t i = 0; i < 65536; ++i)
    if (table[i] != uint16_t(data[2 * i] | data[2 * i + 1] << 8)) __builtin_trap();  // little-endian entries
}

void check_refusal(const std::exception& e, size_t size) {
  const std::string m = e.what();
  if (size == 131072 || m.empty() || m.find('\n') != std::string::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/fuzz_golden_table.XXXXXX";
  if (!::mkdtemp(tmpl)) __builtin_trap();
  g_golden_dir = tmpl;
  if (::mkdir((g_golden_dir + "/sm_90").c_str(), 0755) != 0) __builtin_trap();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuseproof::fuzz::MemoryFile file(data, size);
  try {
    check_table(fuseproof::ref::read_u16_table(file.path()), data, size);
  } catch (const std::runtime_error& e) {
    check_refusal(e, size);
  }
  const std::string dir = g_golden_dir + "/sm_90";
  std::ofstream(dir + "/gelu_tanh_bf16.bin", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  const nlohmann::json prov = {{"arch", "sm_90"},
                               {"files", {{"gelu_tanh_bf16.bin", fuseproof::Sha256::of(data, size)}}}};
  std::ofstream(dir + "/provenance.json", std::ios::trunc) << prov.dump();
  try {
    check_table(fuseproof::audit::read_golden_gelu_table(g_golden_dir, "sm_90", fuseproof::ref::Dtype::kBf16), data,
                size);
  } catch (const fuseproof::CorruptDataError& e) {
    check_refusal(e, size);
  }
  return 0;
}
