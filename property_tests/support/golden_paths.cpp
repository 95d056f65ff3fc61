// golden_paths.cpp: golden data locations.
#include "property_tests/support/golden_paths.h"

#include <cstdlib>

#include "common/golden_verify.h"

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
  static const ref::MufuModel model = [] {
    // The unpacked tables must be the ones provenance.json records (a stale build tree is refused, not trusted).
    for (const char* name : {"mufu_ex2_approx_ftz.bin", "mufu_rcp_approx_ftz.bin"})
      verify_unpacked_golden_file(golden_build_dir() + "/sm_90/" + name, golden_dir() + "/sm_90/provenance.json",
                                  "sm_90");
    return ref::MufuModel::load(golden_build_dir() + "/sm_90");
  }();
  return model;
}

}  // namespace fuseproof::test
