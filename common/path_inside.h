// path_inside.h: a relative path read from a data file (a manifest, a golden file), resolved inside its folder or not
// at all: the one test of "inside" for every reader of outside data.
#pragma once

#include <optional>
#include <string>

namespace fuseproof {

/// `relative`, a path a data file names, resolved inside `root`: refused (nullopt) when it is empty, absolute, names
/// root itself, leaves root after lexical normalisation, or, once symlinks are resolved (weakly_canonical), lies
/// outside root's canonical form (compared component by component, not as a string prefix). Else the resolved path.
std::optional<std::string> path_inside(const std::string& root, const std::string& relative);

}  // namespace fuseproof
