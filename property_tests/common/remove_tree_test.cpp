// remove_tree_test.cpp: common/remove_tree.h removes a nested tree, keeps what a symbolic link inside points to, treats
// a missing path as removed, and reports (does not hide) an entry it cannot remove.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/remove_tree.h"

namespace fuseproof::test {
namespace {

namespace fs = std::filesystem;

std::string temp_dir() {
  char tmpl[] = "/tmp/fuseproof-remove-tree-XXXXXX";
  const char* d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "";
}

TEST(Common_RemoveTree, RemovesNestedTreeButNotWhatALinkPointsTo) {
  const std::string root = temp_dir(), outside = temp_dir();
  fs::create_directories(root + "/a/b/c");
  std::ofstream(root + "/a/b/c/file") << "x";
  std::ofstream(root + "/top") << "y";
  std::ofstream(outside + "/keep") << "z";
  fs::create_directory_symlink(outside, root + "/a/link");
  std::string error;
  EXPECT_TRUE(remove_tree(root, &error)) << error;
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(outside + "/keep")) << "remove_tree followed a symbolic link out of the tree";
  EXPECT_TRUE(remove_tree(outside, &error)) << error;
}

TEST(Common_RemoveTree, MissingPathCountsAsRemoved) {
  std::string error;
  EXPECT_TRUE(remove_tree("/tmp/fuseproof-remove-tree-does-not-exist", &error)) << error;
  EXPECT_TRUE(error.empty());
}

/// Negative control: an entry the kernel refuses to unlink (a /proc file, refused to root as well) is reported, with
/// its path, and remove_tree returns false instead of claiming the tree is gone.
TEST(Common_RemoveTree, NegativeControl_UnremovableEntryIsReported) {
  const std::string path = "/proc/self/comm";
  ASSERT_TRUE(fs::exists(path)) << "needs procfs";
  std::string error;
  EXPECT_FALSE(remove_tree(path, &error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_TRUE(fs::exists(path));
}

}  // namespace
}  // namespace fuseproof::test
