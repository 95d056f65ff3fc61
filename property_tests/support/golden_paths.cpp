// golden_paths.cpp: golden data locations.
#include "property_tests/support/golden_paths.h"

#include <cstdlib>

namespace fuseproof::test {

std::string golden_dir() {
  const char* e = std::getenv("FUSEPROOF_GOLDEN_DIR");
  return e && *e ? e : FUSEPROOF_DEFAULT_GOLDEN_DIR;
}

std::string golden_build_dir() {
  const char* e = std::getenv("FUSEPROOF_GOLDEN_BUILD_DIR");
  return e && *e ? e : FUSEPROOF_DEFAULT_GOLDEN_BUILD_DIR;
}

const ref::MufuModel& sm90_mufu() {
  static const ref::MufuModel model = ref::MufuModel::load(golden_build_dir() + "/sm_90");
  return model;
}

}  // namespace fuseproof::test
