// golden_paths.h: where the tests find golden data (source tree and unpacked build copy), and the sm_90 MUFU model.
#pragma once

#include <string>

#include "reference/mufu_model.h"

namespace fuseproof::test {

/// golden/ in the source tree ($FUSEPROOF_GOLDEN_DIR, else the configured path).
std::string golden_dir();
/// Unpacked archives (the MUFU tables) in the build tree ($FUSEPROOF_GOLDEN_BUILD_DIR, else the configured path).
std::string golden_build_dir();
/// The MUFU model captured on sm_90, loaded once.
const ref::MufuModel& sm90_mufu();

}  // namespace fuseproof::test
