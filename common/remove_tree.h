// remove_tree.h: removes a directory tree with POSIX nftw, for processes that also load libtorch.
#pragma once

#include <string>

namespace fuseproof {

/// Removes `path` and everything under it, never following symbolic links (a link is removed, not its target).
/// True when nothing is left (a missing path included); false with `error` set to one line otherwise.
/// Why not std::filesystem::remove_all: libtorch.so (PyTorch 2.11 wheels) exports its own copy of that function, the
/// dynamic linker binds a process's calls to it once libtorch is loaded, and on the H200 image it jumped to address 0
/// (the auditor's parent died with SIGSEGV in its temporary-directory cleanup: docs/SUBJECTS.md, On the H200).
bool remove_tree(const std::string& path, std::string* error = nullptr);

}  // namespace fuseproof
