// elf_check.h: checks that bytes are an ELF shared object this process could load, before dlopen() is asked to.
#pragma once

#include <cstddef>
#include <string>

namespace fuseproof {

/// Empty when `data` (a whole file, `size` bytes) is an ELF shared object for this process: ELF64, this byte order,
/// ET_DYN, this machine, its program headers and every segment's file bytes inside the file, a PT_DYNAMIC segment.
/// Otherwise the reason, one line without a final period (`ELF type must be ET_DYN (shared object), got ET_EXEC`).
/// Reads only the headers; never maps or runs anything (dlopen() of a damaged file can crash the loader itself).
std::string elf_shared_object_problem(const unsigned char* data, size_t size);

/// The same for a file; "cannot read: <why>" when it cannot be read.
std::string elf_file_problem(const std::string& path);

}  // namespace fuseproof
