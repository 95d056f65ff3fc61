// fuzz_golden_table.cpp: the golden GELU table loader (reference/gelu_table.h read_u16_table) on any file: exactly
// 131,072 bytes load, anything else is refused in one line.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_input.h"
#include "reference/gelu_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuseproof::fuzz::MemoryFile file(data, size);
  try {
    const auto table = fuseproof::ref::read_u16_table(file.path());
    if (size != 131072 || table.size() != 65536) __builtin_trap();  // a wrong size must be refused
    for (size_t i = 0; i < 65536; ++i)
      if (table[i] != uint16_t(data[2 * i] | data[2 * i + 1] << 8)) __builtin_trap();  // little-endian entries
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    if (size == 131072 || m.find('\n') != std::string::npos) __builtin_trap();
  }
  return 0;
}
