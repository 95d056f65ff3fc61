// path_inside.cpp: lexical normal form first, then symlinks resolved, then a component-wise prefix test.
#include "common/path_inside.h"

#include <filesystem>

namespace fuseproof {
namespace {

namespace fs = std::filesystem;

/// Whether `p` lies strictly below `base`, component by component (both canonical).
bool is_below(const fs::path& base, const fs::path& p) {
  auto b = base.begin(), q = p.begin();
  for (; b != base.end(); ++b) {
    if (b->empty()) continue;  // a trailing separator
    if (q == p.end() || *q != *b) return false;
    ++q;
  }
  for (; q != p.end(); ++q)
    if (!q->empty()) return true;
  return false;
}

}  // namespace

std::optional<std::string> path_inside(const std::string& root, const std::string& relative) {
  if (relative.empty() || relative.find('\0') != std::string::npos) return std::nullopt;
  const fs::path rel(relative);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) return std::nullopt;
  const fs::path norm = rel.lexically_normal();
  for (const fs::path& part : norm)
    if (part == "..") return std::nullopt;  // the normal form keeps ".." only where it leaves the root
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(root, ec), ec);
  if (ec) return std::nullopt;
  const fs::path full = fs::weakly_canonical(base / norm, ec);  // a symlink is followed to where it points
  if (ec || !is_below(base, full)) return std::nullopt;
  return full.string();
}

}  // namespace fuseproof
