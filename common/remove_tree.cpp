// remove_tree.cpp: depth-first nftw walk, physical (no link is followed), remove() on every entry.
#include "common/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fuseproof {

namespace {

thread_local std::string* g_first_error = nullptr;

int remove_entry(const char* p, const struct stat*, int, struct FTW*) {
  if (std::remove(p) != 0 && errno != ENOENT && g_first_error && g_first_error->empty())
    *g_first_error = std::string("cannot remove ") + p + ": " + std::strerror(errno);
  return 0;  // go on: remove what can be removed
}

}  // namespace

bool remove_tree(const std::string& path, std::string* error) {
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    if (error) *error = "cannot stat " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string first;
  g_first_error = &first;
  const int rc = nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  g_first_error = nullptr;
  if (rc != 0 && first.empty()) first = "cannot walk " + path + ": " + std::strerror(errno);
  if (!first.empty()) {
    if (error) *error = first;
    return false;
  }
  return true;
}

}  // namespace fuseproof
