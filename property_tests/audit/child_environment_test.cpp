// child_environment_test.cpp: the environment an audit child gets (audit/audit_isolation.h, child_environment).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "audit/audit_isolation.h"

namespace fuseproof::audit {
namespace {

std::vector<std::string> env_of(std::vector<std::string> parent) {
  std::vector<char*> p;
  for (auto& e : parent) p.push_back(e.data());
  p.push_back(nullptr);
  return child_environment(p.data(), 3, 4242);
}

bool has(const std::vector<std::string>& env, const std::string& line) {
  return std::find(env.begin(), env.end(), line) != env.end();
}

size_t count_prefix(const std::vector<std::string>& env, const std::string& prefix) {
  return size_t(std::count_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }));
}

TEST(ChildEnvironment, HeartbeatOfThisParentAndMallocKeepsLargeBlocks) {
  const auto env = env_of({"PATH=/usr/bin", "FUSEPROOF_AUDIT_PROGRESS_FD=9", "FUSEPROOF_AUDIT_PARENT_PID=1"});
  EXPECT_TRUE(has(env, "PATH=/usr/bin"));
  EXPECT_TRUE(has(env, "FUSEPROOF_AUDIT_PROGRESS_FD=3"));
  EXPECT_TRUE(has(env, "FUSEPROOF_AUDIT_PARENT_PID=4242"));
  EXPECT_EQ(count_prefix(env, "FUSEPROOF_AUDIT_PROGRESS_FD="), 1u);  // the grandparent's heartbeat is gone
  EXPECT_EQ(count_prefix(env, "FUSEPROOF_AUDIT_PARENT_PID="), 1u);
  EXPECT_TRUE(has(env, "MALLOC_MMAP_THRESHOLD_=2147483647"));
  EXPECT_TRUE(has(env, "MALLOC_TRIM_THRESHOLD_=2147483647"));
}

TEST(ChildEnvironment, TheUsersMallocSettingsWin) {
  for (const std::string user : {"MALLOC_MMAP_THRESHOLD_=131072", "MALLOC_TRIM_THRESHOLD_=0",
                                 "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072"}) {
    const auto env = env_of({"PATH=/usr/bin", user});
    EXPECT_TRUE(has(env, user)) << user;
    EXPECT_EQ(count_prefix(env, "MALLOC_MMAP_THRESHOLD_="), user.rfind("MALLOC_MMAP", 0) == 0 ? 1u : 0u) << user;
    EXPECT_EQ(count_prefix(env, "MALLOC_TRIM_THRESHOLD_="), user.rfind("MALLOC_TRIM", 0) == 0 ? 1u : 0u) << user;
  }
}

}  // namespace
}  // namespace fuseproof::audit
