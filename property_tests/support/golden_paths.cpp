// golden_paths.cpp: golden data locations for the tests.
#include "property_tests/support/golden_paths.h"

#include <cstdlib>

namespace fuseproof::test {

std::string golden_dir() { return default_golden_dir(); }

std::string golden_build_dir() { return default_golden_build_dir(); }

const std::string& golden_arch() {
  static const std::string arch = [] {
    const char* e = std::getenv("FUSEPROOF_GOLDEN_ARCH");
    return resolve_golden_arch(golden_dir(), e ? e : "", "");
  }();
  return arch;
}

const GoldenArch& golden() {
  static const GoldenArch g(golden_dir(), golden_build_dir(), golden_arch());
  return g;
}

const ref::MufuModel& arch_mufu() { return golden().mufu(); }

}  // namespace fuseproof::test
