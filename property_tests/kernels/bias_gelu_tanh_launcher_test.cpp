// bias_gelu_tanh_launcher_test.cpp: every rejection rule of the launcher on host views: the message, nothing written.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/bias_gelu_tanh_emulation.h"
#include "kernels/cuda_device.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"

namespace fuseproof::test {
namespace {

constexpr int64_t kRows = 4, kWidth = 64;

/// Poisoned x, bias and out of kRows x kWidth (with room for shifted views), and valid views over them.
struct Bench {
  ScalarType t;
  GuardedBuffer x{size_t(2 * kRows * kWidth)}, bias{size_t(2 * kWidth)}, out{size_t(2 * kRows * kWidth)};
  TensorView xv, bv, ov;

  explicit Bench(ScalarType dtype) : t(dtype) {
    fill_half_bits(x.data(), x.size(), ref_dtype(t), 1);
    fill_half_bits(bias.data(), bias.size(), ref_dtype(t), 2);
    out.poison();
    xv = contiguous_view(x.data(), t, {kRows, kWidth});
    bv = contiguous_view(bias.data(), t, {kWidth});
    ov = contiguous_view(out.data(), t, {kRows, kWidth});
  }
};

/// The call is rejected with exactly `expected`, a single line without a final period, and out keeps its poison.
void expect_rejected(Bench& b, const std::string& expected, const BiasGeluOptions& opt = {}) {
  const LaunchStatus can = bias_gelu_tanh_can_implement(b.ov, b.xv, b.bv, opt);
  const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv, opt);
  EXPECT_FALSE(can.ok);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.message, expected);
  EXPECT_EQ(can.message, st.message);
  EXPECT_EQ(st.message.find('\n'), std::string::npos);
  EXPECT_NE(st.message.back(), '.');
  EXPECT_EQ(st.message.rfind("bias_gelu_tanh: ", 0), 0u);
  EXPECT_EQ(b.out.check_untouched(), "") << "out written by a rejected call: " << expected;
}

void expect_rejected_prefix(Bench& b, const std::string& prefix, const BiasGeluOptions& opt = {}) {
  const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv, opt);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.message.rfind(prefix, 0), 0u) << st.message;
  EXPECT_EQ(st.message.find('\n'), std::string::npos);
  EXPECT_EQ(b.out.check_untouched(), "") << "out written by a rejected call: " << st.message;
}

std::string name(ScalarType t) { return scalar_type_name(t); }

void accepts_valid_views(ScalarType t) {
  Bench b(t);
  ASSERT_TRUE(bias_gelu_tanh_can_implement(b.ov, b.xv, b.bv).ok);
  EXPECT_EQ(b.out.check_untouched(), "") << "can_implement wrote out";
  const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_NE(b.out.check_untouched(), "") << "an accepted call left out untouched";
  EXPECT_EQ(b.out.check_guards(), "");
}

/// Negative control of the poison check itself: one changed byte is found.
void poison_check_sees_one_byte(ScalarType t) {
  Bench b(t);
  reinterpret_cast<uint8_t*>(b.out.data())[77] ^= 1;
  EXPECT_NE(b.out.check_untouched(), "");
  Bench g(t);
  reinterpret_cast<uint8_t*>(g.out.data())[-1] ^= 1;
  EXPECT_NE(g.out.check_guards(), "");
}

void every_invalid_width(ScalarType t) {
  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    const int64_t elems = bias_gelu_tanh_vector_elems(t, v);
    GuardedBuffer x{size_t(2 * 4096)}, bias(4096), out{size_t(2 * 4096)};
    BiasGeluOptions opt;
    opt.vector = v;
    int rejected = 0;
    for (int64_t w = 1; w <= 4096; ++w) {
      if (w % elems == 0) continue;
      const LaunchStatus st = bias_gelu_tanh(contiguous_view(out.data(), t, {2, w}), contiguous_view(x.data(), t, {2, w}),
                                             contiguous_view(bias.data(), t, {w}), opt);
      const std::string expected = "bias_gelu_tanh: width must be a positive multiple of " + std::to_string(elems) +
                                   " (" + policy_label(t, v) + "), got " + std::to_string(w);
      ASSERT_EQ(st.message, expected);
      ASSERT_EQ(out.check_untouched(), "") << "width " << w;
      ++rejected;
    }
    EXPECT_EQ(rejected, 4096 - 4096 / elems);
  }
  // The example, verbatim.
  GuardedBuffer x{size_t(13820)}, bias(13820), out{size_t(13820)};
  const LaunchStatus st = bias_gelu_tanh(contiguous_view(out.data(), t, {1, 13820}),
                                         contiguous_view(x.data(), t, {1, 13820}),
                                         contiguous_view(bias.data(), t, {13820}));
  EXPECT_EQ(st.message, "bias_gelu_tanh: width must be a positive multiple of 8 (" + name(t) +
                            ", 16-byte vectors), got 13820");
}

void every_unsupported_dtype(ScalarType t) {
  const ScalarType bad[] = {ScalarType::kFloat32, ScalarType::kFloat64, ScalarType::kInt8, ScalarType::kInt16,
                            ScalarType::kInt32,   ScalarType::kFp8E4m3, ScalarType::kFp8E5m2};
  for (ScalarType u : bad) {
    for (const char* which : {"x", "bias", "out"}) {
      Bench b(t);
      TensorView& v = std::string(which) == "x" ? b.xv : std::string(which) == "bias" ? b.bv : b.ov;
      v.dtype = u;
      expect_rejected(b, std::string("bias_gelu_tanh: ") + which + " dtype must be bf16 or fp16, got " + name(u));
    }
  }
  const ScalarType other = t == ScalarType::kBf16 ? ScalarType::kFp16 : ScalarType::kBf16;
  Bench b(t);
  b.bv.dtype = other;
  expect_rejected(b, "bias_gelu_tanh: bias dtype must equal x dtype (" + name(t) + "), got " + name(other));
  Bench o(t);
  o.ov.dtype = other;
  expect_rejected(o, "bias_gelu_tanh: out dtype must equal x dtype (" + name(t) + "), got " + name(other));
}

void ranks_and_shapes(ScalarType t) {
  {
    Bench b(t);
    b.xv = contiguous_view(b.x.data(), t, {kRows, kWidth, 1});
    expect_rejected(b, "bias_gelu_tanh: x rank must be 2, got 3");
  }
  {
    Bench b(t);
    b.xv = contiguous_view(b.x.data(), t, {kRows * kWidth});
    expect_rejected(b, "bias_gelu_tanh: x rank must be 2, got 1");
  }
  {
    Bench b(t);
    b.ov = contiguous_view(b.out.data(), t, {1, kRows, kWidth});
    expect_rejected(b, "bias_gelu_tanh: out rank must be 2, got 3");
  }
  {
    Bench b(t);
    b.bv = contiguous_view(b.bias.data(), t, {1, kWidth});
    expect_rejected(b, "bias_gelu_tanh: bias rank must be 1, got 2");
  }
  for (int64_t rows : {int64_t(0), int64_t(-1), INT64_MIN}) {
    Bench b(t);
    b.xv.sizes[0] = b.ov.sizes[0] = rows;
    expect_rejected(b, "bias_gelu_tanh: rows must be positive, got " + std::to_string(rows));
  }
  for (int64_t w : {int64_t(0), int64_t(-8)}) {
    Bench b(t);
    b.xv.sizes[1] = b.ov.sizes[1] = w;
    b.bv.sizes[0] = w;
    expect_rejected(b, "bias_gelu_tanh: width must be positive, got " + std::to_string(w));
  }
  {
    Bench b(t);
    b.bv.sizes[0] = kWidth - 1;
    expect_rejected(b, "bias_gelu_tanh: bias length must equal width (64), got 63");
  }
  {
    Bench b(t);
    b.bv.sizes[0] = kWidth * 2;
    b.bv.strides[0] = 1;
    expect_rejected(b, "bias_gelu_tanh: bias length must equal width (64), got 128");
  }
  {
    Bench b(t);
    b.ov = contiguous_view(b.out.data(), t, {kRows + 1, kWidth});
    expect_rejected(b, "bias_gelu_tanh: out shape must equal x shape [4, 64], got [5, 64]");
  }
}

void non_contiguous_views(ScalarType t) {
  {
    Bench b(t);  // transposed x
    b.xv.strides[0] = 1;
    b.xv.strides[1] = kRows;
    expect_rejected(b, "bias_gelu_tanh: x must be contiguous (strides [64, 1]), got strides [1, 4]");
  }
  {
    Bench b(t);  // padded rows of out
    b.ov.strides[0] = kWidth + 8;
    expect_rejected(b, "bias_gelu_tanh: out must be contiguous (strides [64, 1]), got strides [72, 1]");
  }
  {
    Bench b(t);  // every other bias element
    b.bv.strides[0] = 2;
    expect_rejected(b, "bias_gelu_tanh: bias must be contiguous (strides [1]), got strides [2]");
  }
  {
    Bench b(t);  // a broadcast (stride 0) x
    b.xv.strides[0] = 0;
    expect_rejected(b, "bias_gelu_tanh: x must be contiguous (strides [64, 1]), got strides [0, 1]");
  }
  {
    // PyTorch's rule: the stride of a size-1 dimension does not matter, so a [1, W] view with any row stride is fine.
    Bench b(t);
    b.xv = contiguous_view(b.x.data(), t, {1, kWidth});
    b.ov = contiguous_view(b.out.data(), t, {1, kWidth});
    b.xv.strides[0] = 12345;
    EXPECT_TRUE(bias_gelu_tanh(b.ov, b.xv, b.bv).ok);
  }
}

void misaligned_and_null_pointers(ScalarType t) {
  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    BiasGeluOptions opt;
    opt.vector = v;
    const int bytes = static_cast<int>(v);
    for (int shift_elems = 1; shift_elems < bytes / 2; ++shift_elems) {
      for (const char* which : {"x", "bias", "out"}) {
        Bench b(t);
        TensorView& view = std::string(which) == "x" ? b.xv : std::string(which) == "bias" ? b.bv : b.ov;
        view.data = static_cast<uint16_t*>(view.data) + shift_elems;
        char ptr[32];
        std::snprintf(ptr, sizeof ptr, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(view.data)));
        expect_rejected(b,
                        std::string("bias_gelu_tanh: ") + which + " data pointer must be aligned to " +
                            std::to_string(bytes) + " bytes (" + std::to_string(bytes) + "-byte vectors), got " + ptr,
                        opt);
      }
    }
  }
  for (const char* which : {"x", "bias", "out"}) {
    Bench b(t);
    TensorView& view = std::string(which) == "x" ? b.xv : std::string(which) == "bias" ? b.bv : b.ov;
    view.data = nullptr;
    expect_rejected(b, std::string("bias_gelu_tanh: ") + which + " data pointer must be non-null, got 0x0");
  }
}

void devices(ScalarType t) {
  for (const char* which : {"bias", "out"}) {
    Bench b(t);
    TensorView& view = std::string(which) == "bias" ? b.bv : b.ov;
    view.device = Device{DeviceKind::kCuda, 0};
    expect_rejected(b, std::string("bias_gelu_tanh: ") + which + " device must equal x device (cpu), got cuda:0");
  }
  {
    Bench b(t);
    b.xv.device = b.bv.device = b.ov.device = Device{static_cast<DeviceKind>(7), 0};
    expect_rejected(b, "bias_gelu_tanh: x device must be cpu or cuda, got device-kind(7)");
  }
  {
    Bench b(t);  // the emulation entry refuses CUDA views whatever the build
    b.xv.device = b.bv.device = b.ov.device = Device{DeviceKind::kCuda, 0};
    const LaunchStatus st = bias_gelu_tanh_emulate(b.ov, b.xv, b.bv);
    EXPECT_EQ(st.message, "bias_gelu_tanh: x device must be cpu for the emulation, got cuda:0");
    EXPECT_EQ(b.out.check_untouched(), "");
  }
  if (!cuda_device_available()) {
    Bench b(t);
    b.xv.device = b.bv.device = b.ov.device = Device{DeviceKind::kCuda, 0};
#if FUSEPROOF_HAVE_CUDA
    expect_rejected(b, "bias_gelu_tanh: x device must be cpu when no CUDA device is available, got cuda:0");
#else
    expect_rejected(b, "bias_gelu_tanh: x device must be cpu in a build without CUDA, got cuda:0");
#endif
  }
}

void overlap(ScalarType t) {
  {
    Bench b(t);  // out starts one row into x: partial overlap; out lies in x's buffer, so x must keep every byte
    b.ov.data = b.x.data() + kWidth;
    const std::vector<uint16_t> x_before(b.x.data(), b.x.data() + b.x.size());
    const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv);
    EXPECT_EQ(st.message.rfind("bias_gelu_tanh: out must be x itself or not overlap it (exact in-place is supported), "
                               "got out [0x",
                               0),
              0u)
        << st.message;
    EXPECT_EQ(std::vector<uint16_t>(b.x.data(), b.x.data() + b.x.size()), x_before)
        << "x, which holds the overlapping out, was written by a rejected call";
    EXPECT_EQ(b.x.check_guards(), "");
    // Negative control: the same views with out moved off x are accepted and do write the region out covered.
    b.ov.data = b.out.data();
    ASSERT_TRUE(bias_gelu_tanh(b.ov, b.xv, b.bv).ok);
    EXPECT_NE(b.out.check_untouched(), "");
  }
  {
    Bench b(t);  // x starts one vector into out
    b.xv.data = b.out.data() + 8;
    expect_rejected_prefix(b, "bias_gelu_tanh: out must be x itself or not overlap it");
  }
  {
    Bench b(t);  // out covers bias
    b.bv.data = b.out.data() + kWidth;
    expect_rejected_prefix(b, "bias_gelu_tanh: out must not overlap bias, got out [0x");
  }
  {
    Bench b(t);  // bias inside x is fine (both are only read)
    b.bv.data = b.x.data() + kWidth;
    EXPECT_TRUE(bias_gelu_tanh(b.ov, b.xv, b.bv).ok);
  }
  {
    Bench b(t);  // exact in-place is accepted (its result is checked in the emulation tests)
    EXPECT_TRUE(bias_gelu_tanh(b.xv, b.xv, b.bv).ok);
  }
}

void overflowing_sizes(ScalarType t) {
  const int64_t huge_rows[] = {INT64_MAX / 64 + 1, INT64_MAX / 8, INT64_MAX};
  for (int64_t rows : huge_rows) {
    Bench b(t);
    b.xv.sizes[0] = b.ov.sizes[0] = rows;
    b.xv.strides[0] = b.ov.strides[0] = kWidth;
    expect_rejected(b, "bias_gelu_tanh: rows x width x 2 bytes must fit in int64, got " + std::to_string(rows) + " x 64");
  }
  {
    // Fits in int64 but the range wraps the address space: the pointer is near the top.
    Bench b(t);
    b.xv.data = reinterpret_cast<void*>(~uintptr_t(0) - 255);  // 512 bytes from 2^64 - 256
    expect_rejected(b, "bias_gelu_tanh: x data range must not wrap the address space, got 0xffffffffffffff00 + 512 bytes");
  }
}

void options(ScalarType t) {
  {
    Bench b(t);
    BiasGeluOptions opt;
    opt.vector = static_cast<VectorPolicy>(8);
    expect_rejected(b, "bias_gelu_tanh: options.vector must be auto, 16 or 32 bytes, got 8", opt);
  }
  {
    Bench b(t);
    BiasGeluOptions opt;
    opt.emulated_sms = 0;
    expect_rejected(b, "bias_gelu_tanh: options.emulated_sms must be positive, got 0", opt);
  }
  {
    Bench b(t);
    BiasGeluOptions opt;
    opt.max_grid_for_test = -1;
    expect_rejected(b, "bias_gelu_tanh: options.max_grid_for_test must be 0 or positive, got -1", opt);
  }
  EXPECT_EQ(bias_gelu_tanh_resolve_vector(Device{}, VectorPolicy::kAuto), VectorPolicy::kBytes16);
  EXPECT_EQ(bias_gelu_tanh_vector_elems(t, VectorPolicy::kBytes16), 8);
  EXPECT_EQ(bias_gelu_tanh_vector_elems(t, VectorPolicy::kBytes32), 16);
}

FUSEPROOF_BOTH_DTYPES(Launcher, AcceptsValidViews, accepts_valid_views)
FUSEPROOF_BOTH_DTYPES(Launcher, NegativeControl_PoisonCheckSeesOneByte, poison_check_sees_one_byte)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsEveryInvalidWidth, every_invalid_width)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsEveryUnsupportedDtype, every_unsupported_dtype)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsBadRanksAndShapes, ranks_and_shapes)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsNonContiguousViews, non_contiguous_views)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsMisalignedAndNullPointers, misaligned_and_null_pointers)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsMixedDevices, devices)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsPartialOverlap, overlap)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsOverflowingSizes, overflowing_sizes)
FUSEPROOF_BOTH_DTYPES(Launcher, RejectsBadOptions, options)

}  // namespace
}  // namespace fuseproof::test
