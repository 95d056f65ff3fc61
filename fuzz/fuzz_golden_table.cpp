// fuzz_golden_table.cpp: the golden activation table loaders on any file: reference/activation_table.h read_u16_table,
// and common/golden_library.h GoldenArch::u16_table / u32_table with the input signed into a valid provenance (so that
// the size check after verification is reached). Exactly 131,072 bytes load as a uint16 table and 262,144 as a uint32
// one, little-endian; anything else is refused in one line.
#include <stdlib.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "common/golden_library.h"
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

void check_table32(const std::vector<uint32_t>& table, const uint8_t* data, size_t size) {
  if (size != 262144 || table.size() != 65536) __builtin_trap();
  for (size_t i = 0; i < 65536; ++i) {
    const uint32_t want = uint32_t(data[4 * i]) | uint32_t(data[4 * i + 1]) << 8 | uint32_t(data[4 * i + 2]) << 16 |
                          uint32_t(data[4 * i + 3]) << 24;
    if (table[i] != want) __builtin_trap();
  }
}

void check_refusal(const std::exception& e, size_t size, size_t valid_size = 131072) {
  const std::string m = e.what();
  if (size == valid_size || m.empty() || m.find('\n') != std::string::npos) __builtin_trap();
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
  for (const char* name : {"gelu_tanh_bf16.bin", "silu_f32_fp16.bin"})
    std::ofstream(dir + "/" + name, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  const std::string sha = fuseproof::Sha256::of(data, size);
  const nlohmann::json prov = {{"arch", "sm_90"}, {"files", {{"gelu_tanh_bf16.bin", sha}, {"silu_f32_fp16.bin", sha}}}};
  std::ofstream(dir + "/provenance.json", std::ios::trunc) << prov.dump();
  const fuseproof::GoldenArch g(g_golden_dir, g_golden_dir + "/build", "sm_90");
  try {
    check_table(g.u16_table("gelu_tanh_bf16.bin"), data, size);
  } catch (const fuseproof::CorruptDataError& e) {
    check_refusal(e, size);
  }
  try {
    check_table32(g.u32_table("silu_f32_fp16.bin"), data, size);
  } catch (const fuseproof::CorruptDataError& e) {
    check_refusal(e, size, 262144);
  }
  return 0;
}
