// plugin_loader_test.cpp: the loader refuses missing, non-ELF, symbol-less, wrong-ABI, wrong-size, wrong-memory and
// malformed plugins in one line.
#include "audit/plugin_loader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace fuseproof::audit {
namespace {

std::string lib(const std::string& name) { return std::string(FUSEPROOF_TEST_PLUGIN_DIR) + "/lib" + name + ".so"; }

/// Loads `path` expecting a refusal whose one-line message (no final period) contains `needle`.
void expect_refused(const std::string& path, const std::string& needle) {
  try {
    Plugin::load(path, "bias_gelu_tanh");
    ADD_FAILURE() << "loaded " << path;
  } catch (const PluginError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(needle), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.back(), '.') << m;
    EXPECT_EQ(m.rfind("audit: plugin ", 0), 0u) << m;
  }
}

TEST(Audit_PluginLoader, RefusesMissingFile) { expect_refused("/nonexistent/libnothing.so", "not found"); }

TEST(Audit_PluginLoader, RefusesNonElfFile) {
  const std::string path = ::testing::TempDir() + "not_a_library.so";
  std::ofstream(path) << "just text\n";
  expect_refused(path, "is not a shared library");
}

TEST(Audit_PluginLoader, RefusesMissingDescriptorSymbol) {
  expect_refused(lib("bad_no_symbol"), "does not export fuseproof_kernel_descriptor");
}

TEST(Audit_PluginLoader, RefusesWrongAbiVersion) {
  expect_refused(lib("bad_abi_version"), "speaks kernel ABI version 99, this audit speaks version 1");
}

TEST(Audit_PluginLoader, RefusesWrongDescriptorSize) {
  expect_refused(lib("bad_struct_size"), "descriptor size must be " + std::to_string(sizeof(fuseproof_kernel_descriptor_t)) +
                                             ", got " + std::to_string(sizeof(fuseproof_kernel_descriptor_t) - 8));
}

TEST(Audit_PluginLoader, RefusesUnknownMemoryKind) {
  expect_refused(lib("bad_memory"), "memory must be host (0) or cuda (1), got 7");
}

TEST(Audit_PluginLoader, RefusesWrongOp) { expect_refused(lib("bad_op"), "implements op softmax, not bias_gelu_tanh"); }

TEST(Audit_PluginLoader, RefusesBadVectorWidth) { expect_refused(lib("bad_vector"), "vector_bytes must be a power of two"); }

TEST(Audit_PluginLoader, LoadsTheControlPlugin) {
  const Plugin p = Plugin::load(std::string(FUSEPROOF_PLUGIN_DIR) + "/libcontrol_host.so", "bias_gelu_tanh");
  EXPECT_EQ(p.info().abi_version, FUSEPROOF_KERNEL_ABI_VERSION);
  EXPECT_EQ(p.info().memory, FUSEPROOF_MEMORY_HOST);
  EXPECT_EQ(p.info().vector_bytes, 16);
  EXPECT_EQ(p.info().sha256.size(), 64u);
  // A rejection comes back as a non-zero return with a one-line message.
  std::string message;
  EXPECT_NE(p.call(nullptr, nullptr, nullptr, 1, 8, FUSEPROOF_DTYPE_BF16, nullptr, &message), 0);
  EXPECT_EQ(message, "bias_gelu_tanh: out must not be null");
}

}  // namespace
}  // namespace fuseproof::audit
