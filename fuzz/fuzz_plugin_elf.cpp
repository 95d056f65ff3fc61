// fuzz_plugin_elf.cpp: the plugin loader's ELF checks (common/elf_check.h) on mutated shared objects: a verdict for
// every input, one line, never a read outside the buffer. (dlopen itself is not fuzzed: a mutated library that passes
// the checks may run arbitrary code in its constructors.)
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/elf_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size heap copy, so that AddressSanitizer sees any read past the end.
  std::vector<unsigned char> copy(data, data + size);
  const std::string why = fuseproof::elf_shared_object_problem(copy.data(), copy.size());
  if (why.find('\n') != std::string::npos || (!why.empty() && why.back() == '.')) __builtin_trap();
  if (why.empty() && (size < 64 || std::memcmp(data, "\x7F" "ELF", 4) != 0)) __builtin_trap();  // accepted non-ELF
  return 0;
}
