// bias_gelu_tanh_testbed.cpp: guarded buffers, seeded inputs, the reference oracle and the verifier.
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"

#include <cstdio>
#include <cstring>
#include <random>

#include <rapidcheck.h>

#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/golden_paths.h"
#include "reference/add_round.h"
#include "reference/activation_table.h"

namespace fuseproof::test {

ref::Dtype ref_dtype(ScalarType t) { return t == ScalarType::kFp16 ? ref::Dtype::kFp16 : ref::Dtype::kBf16; }
ScalarType scalar_type(ref::Dtype d) { return d == ref::Dtype::kFp16 ? ScalarType::kFp16 : ScalarType::kBf16; }

GuardedBuffer::GuardedBuffer(size_t elems, size_t offset_bytes) : elems_(elems) {
  storage_.assign(2 * kGuardBytes + 64 + offset_bytes + elems * 2, kPoison);
  const uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data()) + kGuardBytes;
  const uintptr_t aligned = (base + 63) & ~uintptr_t(63);
  data_ = reinterpret_cast<uint16_t*>(aligned + offset_bytes);
}

void GuardedBuffer::poison() { std::memset(storage_.data(), kPoison, storage_.size()); }

namespace {
std::string first_change(const std::vector<uint8_t>& s, size_t lo, size_t hi, const uint8_t* data) {
  for (size_t i = lo; i < hi; ++i) {
    if (s[i] != GuardedBuffer::kPoison) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "byte %lld from data is 0x%02X, poison was 0x%02X",
                    static_cast<long long>(static_cast<ptrdiff_t>(i) - (data - s.data())), s[i],
                    GuardedBuffer::kPoison);
      return buf;
    }
  }
  return {};
}
}  // namespace

std::string GuardedBuffer::check_untouched() const {
  return first_change(storage_, 0, storage_.size(), reinterpret_cast<const uint8_t*>(data_));
}

std::string GuardedBuffer::check_guards() const {
  const auto* d = reinterpret_cast<const uint8_t*>(data_);
  const size_t begin = size_t(d - storage_.data()), end = begin + elems_ * 2;
  std::string s = first_change(storage_, 0, begin, d);
  return s.empty() ? first_change(storage_, end, storage_.size(), d) : s;
}

void fill_half_bits(uint16_t* p, size_t n, ref::Dtype d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<uint16_t> specials = special_half_patterns(d);
  // Start at a seeded offset so the specials meet different biases and columns.
  const size_t shift = specials.empty() ? 0 : size_t(rng() % specials.size());
  size_t i = 0;
  for (; i < n && i < specials.size(); ++i) p[i] = specials[(i + shift) % specials.size()];
  constexpr int kClasses = static_cast<int>(HalfClass::kAny) + 1;
  for (; i < n; ++i) {
    const uint64_t r = rng();
    p[i] = half_of_class(d, static_cast<HalfClass>(r % kClasses), uint32_t(r >> 32));
  }
}

BiasGeluOracle::BiasGeluOracle(ref::Dtype d, std::vector<uint16_t> gelu_table, std::string model)
    : d_(d), table_(std::move(gelu_table)), model_(std::move(model)) {}

const BiasGeluOracle& BiasGeluOracle::libm(ref::Dtype d) {
  auto make = [](ref::Dtype dt) {
    ref::MathConfig cfg;
    cfg.math = ref::MathModel::kLibm;
    return BiasGeluOracle(dt, ref::activation_table(ref::Activation::kGeluTanh, dt, cfg), "libm");
  };
  static const BiasGeluOracle bf16 = make(ref::Dtype::kBf16), fp16 = make(ref::Dtype::kFp16);
  return d == ref::Dtype::kBf16 ? bf16 : fp16;
}

const BiasGeluOracle& BiasGeluOracle::cuda(ref::Dtype d) {
  auto make = [](ref::Dtype dt) {
    ref::MathConfig cfg;
    cfg.math = ref::MathModel::kCuda;
    cfg.mufu = &arch_mufu();
    return BiasGeluOracle(dt, ref::activation_table(ref::Activation::kGeluTanh, dt, cfg), "cuda");
  };
  static const BiasGeluOracle bf16 = make(ref::Dtype::kBf16), fp16 = make(ref::Dtype::kFp16);
  return d == ref::Dtype::kBf16 ? bf16 : fp16;
}

uint16_t BiasGeluOracle::operator()(uint16_t x, uint16_t bias) const {
  return table_[ref::add_round(d_, x, bias, ref::NanPolicy::kCudaCvtRn)];
}

uint64_t verify_bias_gelu(MismatchLog& log, const BiasGeluOracle& oracle, int64_t rows, int64_t width,
                          const uint16_t* x, const uint16_t* bias, const uint16_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      const int64_t i = r * width + c;
      const uint16_t expected = oracle(x[i], bias[c]);
      if (out[i] != expected)
        log.record("r=" + std::to_string(r) + ",c=" + std::to_string(c), x[i], bias[c], out[i], expected);
    }
  }
  return uint64_t(rows) * uint64_t(width);
}

bool output_is_trivial(const uint16_t* out, size_t n) {
  bool all_zero = true, all_nan = true;
  for (size_t i = 0; i < n && (all_zero || all_nan); ++i) {
    all_zero = all_zero && out[i] == 0;
    all_nan = all_nan && out[i] == 0x7FFF;
  }
  return all_zero || all_nan;
}

const std::vector<int64_t>& production_widths() {
  // Wan2.2: dim 3072 (5B) and 5120 (14B), FFN 14336 (5B) and 13824 (14B); plus 8960 and 4096/6144/8192/18944.
  static const std::vector<int64_t> w = {3072, 4096, 5120, 6144, 8192, 8960, 13824, 14336, 18944};
  return w;
}

std::string policy_label(ScalarType t, VectorPolicy v) {
  return std::string(scalar_type_name(t)) + ", " + std::to_string(static_cast<int>(v)) + "-byte vectors";
}

RandomLaunch gen_random_launch(ScalarType t, const RandomLaunchLimits& limits) {
  const ref::Dtype d = ref_dtype(t);
  RandomLaunch l{};
  l.vector = *rc::gen::element(VectorPolicy::kBytes16, VectorPolicy::kBytes32);
  const int64_t elems = bias_gelu_tanh_vector_elems(t, l.vector);
  l.width = *rc::gen::weightedOneOf<int64_t>({
      {3, rc::gen::map(rc::gen::inRange<int64_t>(1, 9), [elems](int64_t k) { return k * elems; })},
      {2, rc::gen::elementOf(production_widths())},
      {2, rc::gen::map(rc::gen::inRange<int64_t>(1, limits.max_vectors + 1), [elems](int64_t k) { return k * elems; })},
  });
  l.rows = *rc::gen::inRange<int64_t>(1, (l.width > 4096 ? limits.max_rows_wide : limits.max_rows) + 1);
  l.math = *rc::gen::elementOf(std::vector<GeluMath>(std::begin(kAllGeluMaths), std::end(kAllGeluMaths)));
  // Fixed pool sizes (coprime, so the odd rows meet every bias of the pool): not scaled by rapidcheck's size.
  l.pairs = *rc::gen::container<std::vector<std::pair<uint16_t, uint16_t>>>(64, gen_half_pair(d));
  l.x_pool = *rc::gen::container<std::vector<uint16_t>>(61, gen_half_bits(d));
  return l;
}

void fill_random_launch(const RandomLaunch& l, uint16_t* x, uint16_t* bias) {
  const size_t np = l.pairs.size(), nx = l.x_pool.size();
  for (int64_t c = 0; c < l.width; ++c) bias[c] = l.pairs[size_t(c) % np].second;
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.width; ++c)
      x[r * l.width + c] = r % 2 == 0 ? l.pairs[size_t(c) % np].first : l.x_pool[size_t(31 * r + c) % nx];
}

}  // namespace fuseproof::test
