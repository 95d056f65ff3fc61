// bias_gelu_tanh_testbed.h: shared test bench for the fused kernel: guarded buffers, seeded inputs, the oracle, verify.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/bias_gelu_tanh_launcher.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/gelu_tanh_eager.h"

namespace fuseproof::test {

/// The reference dtype of a kernel dtype (bf16 or fp16 only).
ref::Dtype ref_dtype(ScalarType t);
/// The kernel dtype of a reference dtype.
ScalarType scalar_type(ref::Dtype d);

/// Host memory with poisoned guard regions on both sides; data() is 64-byte aligned plus `offset_bytes`.
class GuardedBuffer {
 public:
  static constexpr uint8_t kPoison = 0xA5;
  static constexpr size_t kGuardBytes = 256;

  explicit GuardedBuffer(size_t elems, size_t offset_bytes = 0);
  uint16_t* data() { return data_; }
  const uint16_t* data() const { return data_; }
  size_t size() const { return elems_; }
  /// Fills the whole allocation (guards and data) with kPoison.
  void poison();
  /// Empty when every byte of the allocation is still kPoison, else where the first changed byte is.
  std::string check_untouched() const;
  /// Empty when both guard regions are still kPoison, else where the first changed byte is.
  std::string check_guards() const;

 private:
  std::vector<uint8_t> storage_;
  uint16_t* data_ = nullptr;
  size_t elems_ = 0;
};

/// Fills n patterns of dtype d from `seed`: the dtype's special patterns first, then a mix of every class
/// (zeros, subnormals, normals, near overflow, Inf, quiet and signalling NaN, tie neighbours, any bits).
void fill_half_bits(uint16_t* p, size_t n, ref::Dtype d, uint64_t seed);

/// The reference's bias_gelu_tanh: table[add_round(x, bias)], with the GELU table of one tanh model and CUDA's NaN
/// (0x7FFF), i.e. what eager CUDA computes when that tanh model is the device's.
class BiasGeluOracle {
 public:
  BiasGeluOracle(ref::Dtype d, std::vector<uint16_t> gelu_table, std::string model);
  /// Host tanhf (MathModel::kLibm): what the CPU emulation must give.
  static const BiasGeluOracle& libm(ref::Dtype d);
  /// CUDA 13.0 tanhf for sm_90 (MathModel::kCuda with the captured MUFU tables): what the GPU kernel must give.
  static const BiasGeluOracle& cuda(ref::Dtype d);

  uint16_t operator()(uint16_t x, uint16_t bias) const;
  ref::Dtype dtype() const { return d_; }
  const std::vector<uint16_t>& table() const { return table_; }
  const std::string& model() const { return model_; }

 private:
  ref::Dtype d_;
  std::vector<uint16_t> table_;
  std::string model_;
};

/// Compares out[r, c] with oracle(x[r, c], bias[c]) for every element, recording "r=..,c=.." for each mismatch.
/// Returns the number of cases compared.
uint64_t verify_bias_gelu(MismatchLog& log, const BiasGeluOracle& oracle, int64_t rows, int64_t width,
                          const uint16_t* x, const uint16_t* bias, const uint16_t* out);

/// True when out is all +0 or all 0x7FFF: a guard against a test that passes because nothing was computed.
bool output_is_trivial(const uint16_t* out, size_t n);

/// Production MLP widths (Wan2.2 5B/14B hidden and FFN sizes, and other common ones).
const std::vector<int64_t>& production_widths();

/// A random valid launch for dtype t, drawn inside a rapidcheck property: vector policy, width (small multiples of
/// the vector, production widths, up to max_vectors vectors), rows (fewer for rows wider than 4,096), GELU math, and
/// the input patterns. rapidcheck owns the patterns (pools that fill_random_launch tiles over x and bias), so a
/// failing case shrinks to simpler patterns as well as to a smaller shape.
struct RandomLaunch {
  VectorPolicy vector;
  GeluMath math;
  int64_t rows, width;
  std::vector<std::pair<uint16_t, uint16_t>> pairs;  ///< (x, bias) pairs: exact ties, tie neighbours, independent
  std::vector<uint16_t> x_pool;                      ///< further x patterns for the odd rows
};
struct RandomLaunchLimits {
  int64_t max_vectors = 4096;  ///< widest row, in vectors
  int64_t max_rows = 256;      ///< most rows up to 4,096 elements wide
  int64_t max_rows_wide = 64;  ///< most rows wider than that
};
RandomLaunch gen_random_launch(ScalarType t, const RandomLaunchLimits& limits = {});
/// bias[c] = pairs[c % P].bias; x[r, c] = pairs[c % P].x on even rows (each meets its own bias: the ties stay ties),
/// x_pool[(31 r + c) % X] on odd rows.
void fill_random_launch(const RandomLaunch& l, uint16_t* x, uint16_t* bias);

/// "bf16, 16-byte vectors" style label.
std::string policy_label(ScalarType t, VectorPolicy v);

}  // namespace fuseproof::test

/// TEST(<Area>_BiasGeluTanh_bf16, Property) and its fp16 twin, both calling fn(ScalarType) (include gtest first).
#define FUSEPROOF_BOTH_DTYPES(Area, Property, fn)                                            \
  TEST(Area##_BiasGeluTanh_bf16, Property) { fn(::fuseproof::ScalarType::kBf16); }           \
  TEST(Area##_BiasGeluTanh_fp16, Property) { fn(::fuseproof::ScalarType::kFp16); }
