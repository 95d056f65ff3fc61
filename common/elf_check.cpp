// elf_check.cpp: ELF64 header and program-header checks with overflow-safe bounds (<elf.h> layouts, memcpy reads).
#include "common/elf_check.h"

#include <elf.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace fuseproof {
namespace {

#if defined(__x86_64__)
constexpr unsigned kMachine = EM_X86_64;
constexpr const char* kMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr unsigned kMachine = EM_AARCH64;
constexpr const char* kMachineName = "aarch64";
#else
#error "elf_check: unknown host machine"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kData = ELFDATA2LSB;
#else
constexpr unsigned char kData = ELFDATA2MSB;
#endif

/// True when [offset, offset + length) lies inside a file of `size` bytes (no overflow).
bool inside(uint64_t offset, uint64_t length, size_t size) { return offset <= size && length <= size - offset; }

std::string type_name(unsigned t) {
  switch (t) {
    case ET_NONE: return "ET_NONE";
    case ET_REL: return "ET_REL (object file)";
    case ET_EXEC: return "ET_EXEC (executable)";
    case ET_DYN: return "ET_DYN";
    case ET_CORE: return "ET_CORE (core dump)";
    default: return std::to_string(t);
  }
}

}  // namespace

std::string elf_shared_object_problem(const unsigned char* data, size_t size) {
  if (size < SELFMAG || std::memcmp(data, ELFMAG, SELFMAG) != 0) return "no ELF header";
  if (size < sizeof(Elf64_Ehdr)) return "ELF header truncated: " + std::to_string(size) + " bytes";
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return "ELF class must be 64-bit, got " + std::string(eh.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "invalid");
  if (eh.e_ident[EI_DATA] != kData) return "ELF byte order differs from this machine's";
  if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) return "ELF version must be 1";
  if (eh.e_type != ET_DYN) return "ELF type must be ET_DYN (shared object), got " + type_name(eh.e_type);
  if (eh.e_machine != kMachine)
    return "ELF machine must be " + std::string(kMachineName) + " (" + std::to_string(kMachine) + "), got " +
           std::to_string(eh.e_machine);
  if (eh.e_ehsize != sizeof(Elf64_Ehdr)) return "ELF header size must be 64, got " + std::to_string(eh.e_ehsize);
  if (eh.e_phentsize != sizeof(Elf64_Phdr))
    return "program header size must be " + std::to_string(sizeof(Elf64_Phdr)) + ", got " +
           std::to_string(eh.e_phentsize);
  if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) return "no program headers";
  if (!inside(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr), size))
    return "program headers lie outside the file (" + std::to_string(eh.e_phnum) + " at offset " +
           std::to_string(eh.e_phoff) + ", file " + std::to_string(size) + " bytes)";
  bool dynamic = false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, data + eh.e_phoff + uint64_t(i) * sizeof ph, sizeof ph);
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
    if (!inside(ph.p_offset, ph.p_filesz, size))
      return "segment " + std::to_string(i) + " lies outside the file (offset " + std::to_string(ph.p_offset) +
             ", " + std::to_string(ph.p_filesz) + " bytes; file " + std::to_string(size) + " bytes): truncated?";
    if (ph.p_type == PT_LOAD && ph.p_filesz > ph.p_memsz)
      return "segment " + std::to_string(i) + " holds more file bytes than memory";
    dynamic = dynamic || ph.p_type == PT_DYNAMIC;
  }
  if (!dynamic) return "no PT_DYNAMIC segment (a static executable or object, not a shared library)";
  return "";
}

std::string elf_file_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read: " + std::string(std::strerror(errno));
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return "cannot read: " + std::string(std::strerror(errno));
  return elf_shared_object_problem(bytes.data(), bytes.size());
}

}  // namespace fuseproof
