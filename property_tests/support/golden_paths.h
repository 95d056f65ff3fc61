// golden_paths.h: the golden data the tests check against: the architecture captured in golden/, through the golden
// library (common/golden_library.h).
#pragma once

#include <string>

#include "common/golden_library.h"
#include "reference/mufu_model.h"

namespace fuseproof::test {

/// golden/ in the source tree ($FUSEPROOF_GOLDEN_DIR, else the configured path).
std::string golden_dir();
/// Unpacked archives (the MUFU tables) in the build tree ($FUSEPROOF_GOLDEN_BUILD_DIR, else the configured path).
std::string golden_build_dir();
/// The architecture under test: $FUSEPROOF_GOLDEN_ARCH, else the only one golden/ holds.
const std::string& golden_arch();
/// Its golden data.
const GoldenArch& golden();
/// Its MUFU model (tables and ex2 points verified), loaded once.
const ref::MufuModel& arch_mufu();

}  // namespace fuseproof::test
