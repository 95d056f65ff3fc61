// plugin_loader_test.cpp: the loader refuses missing, non-ELF, symbol-less, wrong-ABI, wrong-size, wrong-memory,
// wrong-op and wrong-contract plugins in one line, and loads version-1 plugins through its shim.
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
  expect_refused(lib("bad_abi_version"), "speaks kernel ABI version 99, this audit speaks versions 1 to 4");
}

TEST(Audit_PluginLoader, RefusesWrongDescriptorSize) {
  expect_refused(lib("bad_struct_size"), "descriptor size must be " + std::to_string(sizeof(fuseproof_kernel_descriptor_t)) +
                                             " for ABI version 4, got " +
                                             std::to_string(sizeof(fuseproof_kernel_descriptor_t) - 8));
}

TEST(Audit_PluginLoader, RefusesAContractTheOpLacks) {
  expect_refused(lib("bad_contract"), "claims contract fp32, which op bias_gelu_tanh does not have");
}

TEST(Audit_PluginLoader, RefusesAVersion1PluginOfAnotherOp) {
  expect_refused(lib("bad_v1_op"), "speaks ABI version 1, which has op bias_gelu_tanh only, not silu_and_mul");
}

TEST(Audit_PluginLoader, RefusesAPluginAuditedAsAnotherOp) {
  try {
    Plugin::load(std::string(FUSEPROOF_PLUGIN_DIR) + "/libsilu_and_mul_emulated.so", "bias_gelu_tanh");
    ADD_FAILURE() << "loaded a silu_and_mul plugin as bias_gelu_tanh";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("implements op silu_and_mul, not bias_gelu_tanh"), std::string::npos) << e.what();
  }
}

/// The shim: a version-1 plugin loads, is called with (out, x, bias) for the v1 layout and refused for another.
TEST(Audit_PluginLoader, LoadsAVersion1PluginThroughTheShim) {
  const Plugin p = Plugin::load(lib("bad_v1_ok"), "bias_gelu_tanh");
  EXPECT_EQ(p.info().abi_version, FUSEPROOF_KERNEL_ABI_VERSION_1);
  EXPECT_EQ(p.info().contract, "eager");
  std::string message;
  uint16_t out[8], x[8], b[8];
  EXPECT_EQ(p.call_with_bias(out, x, b, 1, 8, FUSEPROOF_DTYPE_BF16, nullptr, &message), 0);
  EXPECT_NE(p.call_with_bias(nullptr, x, b, 1, 8, FUSEPROOF_DTYPE_BF16, nullptr, &message), 0);
  EXPECT_EQ(message, "v1 plugin: out must not be null");
  fuseproof_call_t c{};
  c.dtype = FUSEPROOF_DTYPE_BF16;
  c.shape[0] = 1;
  c.shape[1] = 8;
  c.out = out;
  c.n_inputs = 2;
  c.inputs[0] = {x, {16, 1}};  // a row stride v1 cannot take
  c.inputs[1] = {b, {0, 1}};
  EXPECT_NE(p.call(c, &message), 0);
  EXPECT_NE(message.find("ABI version 1 takes x {width, 1} and bias {0, 1} only"), std::string::npos) << message;
}

/// Version 2 (the call without group_rows) still loads for the ops without group-broadcast inputs, and is called with
/// the version-2 struct size; one that claims a 3-input op is refused (it could not read group_rows).
TEST(Audit_PluginLoader, LoadsAVersion2PluginAndCallsItWithTheVersion2Size) {
  const Plugin p = Plugin::load(lib("bad_v2_ok"), "bias_gelu_tanh");
  EXPECT_EQ(p.info().abi_version, FUSEPROOF_KERNEL_ABI_VERSION_2);
  uint16_t out[8], x[8], b[8];
  std::string message;
  EXPECT_EQ(p.call_with_bias(out, x, b, 1, 8, FUSEPROOF_DTYPE_BF16, nullptr, &message), 0) << message;
}

TEST(Audit_PluginLoader, RefusesAVersion2PluginOfAGroupBroadcastOp) {
  expect_refused(lib("bad_v2_group_op"),
                 "speaks ABI version 2, but op gated_residual has group-broadcast inputs, which need version 3");
}

/// Version 3 (the call without the quantization fields) still loads for the elementwise ops and is called with the
/// version-3 struct size (the plugin refuses any other).
TEST(Audit_PluginLoader, LoadsAVersion3PluginAndCallsItWithTheVersion3Size) {
  const Plugin p = Plugin::load(lib("bad_v3_ok"), "bias_gelu_tanh");
  EXPECT_EQ(p.info().abi_version, FUSEPROOF_KERNEL_ABI_VERSION_3);
  EXPECT_FALSE(p.info().quant());
  uint16_t out[8], x[8], b[8];
  fuseproof_call_t c{};
  c.dtype = FUSEPROOF_DTYPE_BF16;
  c.shape[0] = 1;
  c.shape[1] = 8;
  c.out = out;
  c.n_inputs = 2;
  c.inputs[0] = {x, {8, 1}};
  c.inputs[1] = {b, {0, 1}};
  c.group_rows = 1;
  std::string message;
  EXPECT_EQ(p.call(c, &message), 0) << message;
}

/// A quantization op needs version 4 (the call's scales, layout and scalars) and a contract of its own.
TEST(Audit_PluginLoader, RefusesAQuantizationOpBelowVersion4) {
  expect_refused(lib("bad_quant_v3"), "speaks ABI version 3, but op nvfp4_quant is a quantization op, which needs "
                                      "version 4");
}

TEST(Audit_PluginLoader, RefusesAQuantizationContractTheOpLacks) {
  expect_refused(lib("bad_quant_contract"), "claims contract fp8-group, which op nvfp4_quant does not have (vllm-ref");
}

/// Negative control of the two above: the same plugin at version 4 with a NULL contract loads, as the op's first.
TEST(Audit_PluginLoader, LoadsAVersion4QuantizationPluginWithItsFirstContract) {
  const Plugin p = Plugin::load(lib("bad_quant_ok"), "nvfp4_quant");
  EXPECT_EQ(p.info().abi_version, FUSEPROOF_KERNEL_ABI_VERSION);
  EXPECT_EQ(p.info().op, "nvfp4_quant");
  EXPECT_EQ(p.info().contract, "vllm-ref");
  EXPECT_TRUE(p.info().quant());
}

TEST(Audit_PluginLoader, RefusesUnknownMemoryKind) {
  expect_refused(lib("bad_memory"), "memory must be host (0) or cuda (1), got 7");
}

TEST(Audit_PluginLoader, RefusesAnOpNotInTheSpec) {
  expect_refused(lib("bad_op"), "implements op softmax, which is not in the op spec");
}

TEST(Audit_PluginLoader, RefusesBadVectorWidth) { expect_refused(lib("bad_vector"), "vector_bytes must be a power of two"); }

TEST(Audit_PluginLoader, LoadsTheControlPlugin) {
  const Plugin p = Plugin::load(std::string(FUSEPROOF_PLUGIN_DIR) + "/libcontrol_host.so", "bias_gelu_tanh");
  EXPECT_EQ(p.info().abi_version, FUSEPROOF_KERNEL_ABI_VERSION_1);
  EXPECT_EQ(p.info().memory, FUSEPROOF_MEMORY_HOST);
  EXPECT_EQ(p.info().vector_bytes, 16);
  EXPECT_EQ(p.info().sha256.size(), 64u);
  // A rejection comes back as a non-zero return with a one-line message.
  std::string message;
  EXPECT_NE(p.call_with_bias(nullptr, nullptr, nullptr, 1, 8, FUSEPROOF_DTYPE_BF16, nullptr, &message), 0);
  EXPECT_EQ(message, "bias_gelu_tanh: out must not be null");
}

}  // namespace
}  // namespace fuseproof::audit
