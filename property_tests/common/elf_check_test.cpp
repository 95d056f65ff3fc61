// elf_check_test.cpp: common/elf_check.h accepts a real plugin and names what is wrong with each damaged copy of it.
#include "common/elf_check.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<unsigned char>;

Bytes control_plugin() {
  std::ifstream in(FUSEPROOF_CONTROL_PLUGIN, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string problem(const Bytes& b) { return fuseproof::elf_shared_object_problem(b.data(), b.size()); }

/// End of the last loadable segment's file bytes (what follows, e.g. debug info, is not loaded: cutting there is not
/// truncation as the loader sees it).
size_t loaded_end(const Bytes& b) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  size_t end = 0;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD) end = std::max<size_t>(end, ph.p_offset + ph.p_filesz);
  }
  return end;
}

template <typename T>
void poke(Bytes& b, size_t offset, T value) {
  std::memcpy(b.data() + offset, &value, sizeof value);
}

TEST(Common_ElfCheck, AcceptsTheControlPlugin) {
  const Bytes b = control_plugin();
  ASSERT_GT(b.size(), 1000u);
  EXPECT_EQ(problem(b), "");
  EXPECT_EQ(fuseproof::elf_file_problem(FUSEPROOF_CONTROL_PLUGIN), "");
}

// Each damaged copy is refused with its own reason (so the check cannot pass everything, nor refuse for one reason).
TEST(Common_ElfCheck, NamesWhatIsWrongWithEachDamagedCopy) {
  const Bytes good = control_plugin();
  struct Case {
    const char* what;
    Bytes bytes;
    std::string expected;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", {}, "no ELF header"});
  cases.push_back({"text", Bytes{'j', 'u', 's', 't', ' ', 't', 'e', 'x', 't'}, "no ELF header"});
  cases.push_back({"header cut", Bytes(good.begin(), good.begin() + 40), "ELF header truncated: 40 bytes"});
  Bytes b = good;
  b[EI_CLASS] = ELFCLASS32;
  cases.push_back({"32-bit", b, "ELF class must be 64-bit, got 32-bit"});
  b = good;
  b[EI_DATA] = ELFDATA2MSB;
  cases.push_back({"big-endian", b, "ELF byte order differs from this machine's"});
  b = good;
  poke<Elf64_Half>(b, offsetof(Elf64_Ehdr, e_type), ET_EXEC);
  cases.push_back({"executable", b, "ELF type must be ET_DYN (shared object), got ET_EXEC (executable)"});
  b = good;
  poke<Elf64_Half>(b, offsetof(Elf64_Ehdr, e_type), ET_REL);
  cases.push_back({"object file", b, "ELF type must be ET_DYN (shared object), got ET_REL (object file)"});
  b = good;
  poke<Elf64_Half>(b, offsetof(Elf64_Ehdr, e_machine), EM_RISCV);
  cases.push_back({"other machine", b, "ELF machine must be"});
  b = good;
  poke<Elf64_Half>(b, offsetof(Elf64_Ehdr, e_phentsize), 12);
  cases.push_back({"phentsize", b, "program header size must be 56, got 12"});
  b = good;
  poke<Elf64_Off>(b, offsetof(Elf64_Ehdr, e_phoff), ~Elf64_Off(0) - 8);
  cases.push_back({"phoff overflow", b, "program headers lie outside the file"});
  b = good;
  b.resize(loaded_end(good) - 1);
  cases.push_back({"truncated", b, "lies outside the file"});
  for (const Case& c : cases) {
    const std::string got = problem(c.bytes);
    EXPECT_NE(got.find(c.expected), std::string::npos) << c.what << ": got '" << got << "'";
    EXPECT_EQ(got.find('\n'), std::string::npos) << c.what;
    if (!got.empty()) EXPECT_NE(got.back(), '.') << c.what;
  }
}

TEST(Common_ElfCheck, UnreadableFileIsAProblem) {
  EXPECT_EQ(fuseproof::elf_file_problem("/nonexistent/lib.so").rfind("cannot read: ", 0), 0u);
}

}  // namespace
