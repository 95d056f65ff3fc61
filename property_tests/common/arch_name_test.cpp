// arch_name_test.cpp: the one architecture grammar of common/golden_library.h: what it accepts, what it refuses (a
// path is never an architecture), and that golden lookup applies it to --arch and to golden/'s folder names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/exit_status.h"
#include "common/golden_library.h"
#include "common/quoted_value.h"
#include "common/remove_tree.h"

namespace fuseproof {
namespace {

namespace fs = std::filesystem;

TEST(Common_ArchName, Grammar) {
  for (const char* good : {"sm_90", "sm_90a", "sm_80", "sm_100", "sm_100a", "sm_100f", "sm_120"})
    EXPECT_TRUE(is_arch_name(good)) << good;
  for (const char* bad : {"", "sm_", "sm_9", "sm_1000", "sm_90/../sm_90", "../../x", "sm_90b", "sm_90aa", "SM_90",
                          "sm90", "sm_9x", "sm_test", "sm_90 ", " sm_90", "sm_90/", "compute_90", "sm_-90"})
    EXPECT_FALSE(is_arch_name(bad)) << bad;
}

TEST(Common_ArchName, RefusalIsOneLineNamingTheValue) {
  EXPECT_EQ(arch_name_error("sm_90"), "");
  EXPECT_EQ(arch_name_error("../../x"), "must be sm_<digits> (e.g. sm_90), got '../../x'");
  try {
    require_arch_name("sm_90/../sm_90");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--arch: must be sm_<digits> (e.g. sm_90), got 'sm_90/../sm_90'");
  }
  EXPECT_NO_THROW(require_arch_name("sm_100a"));
  // A control character in the value cannot split the line.
  EXPECT_EQ(arch_name_error("sm_90\nx"), "must be sm_<digits> (e.g. sm_90), got 'sm_90\\x0ax'");
  EXPECT_EQ(quoted_value(std::string(201, 'a')), "'" + std::string(200, 'a') + "...'");
}

TEST(Common_ArchName, GoldenLookupAppliesIt) {
  const fs::path g = fs::path(::testing::TempDir()) / ("arch_name_" + std::to_string(::getpid()));
  remove_tree(g);
  for (const char* d : {"sm_90", "sm_test", "sm_90.bak", "notes"}) fs::create_directories(g / d);
  EXPECT_EQ(golden_archs(g.string()), std::vector<std::string>{"sm_90"});
  EXPECT_EQ(resolve_golden_arch(g.string(), "", ""), "sm_90");  // the only one: the others are not architectures
  EXPECT_EQ(resolve_golden_arch(g.string(), "sm_100", ""), "sm_100");
  EXPECT_THROW(resolve_golden_arch(g.string(), "sm_90/../sm_90", ""), UsageError);
  EXPECT_THROW(resolve_golden_arch(g.string(), "../../x", "sm_90"), UsageError);
  remove_tree(g);
}

}  // namespace
}  // namespace fuseproof
