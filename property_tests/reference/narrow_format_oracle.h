// narrow_format_oracle.h: independent models of the E4M3 and E2M1 casts (nearest value by boundary tables built in
// double from the formats' definitions), and a parallel sweep of binary32 patterns that checks a cast against them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "reference/dtype.h"
#include "common/parallel_for.h"

namespace fuseproof::test {

/// A sign-magnitude narrow format described by its definition alone: the positive codes 0..max_code in increasing
/// value order, their exact values (from the format's formula, in double), the code NaN inputs give (with or without
/// the input's sign) and what lies beyond the last value's rounding boundary.
struct NarrowFormat {
  const char* name;
  std::vector<double> values;  ///< values[c] = the magnitude of code c, c = 0..max_code
  uint8_t sign_bit;            ///< 0x80 (E4M3), 0x08 (E2M1)
  double overflow_tie;         ///< |x| == this rounds to max_code (even) ; |x| > this is overflow
  uint8_t overflow_code;       ///< the magnitude code of overflow (max_code: saturate; 0x7F: E4M3 NaN)
  uint8_t nan_code;            ///< the code of a NaN input
  bool nan_keeps_sign;         ///< NaN code | the input's sign bit
};

/// E4M3 (fn) from its definition: E = 0: M * 2^-9; E = 1..15: (1 + M/8) * 2^(E - 7), without 0x7F (NaN).
inline std::vector<double> e4m3_values() {
  std::vector<double> v;
  for (int c = 0; c < 0x7F; ++c) {
    const int e = c >> 3, m = c & 7;
    v.push_back(e == 0 ? m * std::ldexp(1.0, -9) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7));
  }
  return v;
}

/// `saturate`: CUDA __NV_SATFINITE; otherwise torch's to(float8_e4m3fn) (NaN above the tie, sign kept).
inline NarrowFormat e4m3_format(bool saturate) {
  return {saturate ? "e4m3 saturate" : "e4m3 nan", e4m3_values(), 0x80, 464.0, uint8_t(saturate ? 0x7E : 0x7F),
          0x7F, !saturate};
}

/// E2M1 from its definition: E = 0: M * 0.5; E = 1..3: (1 + M/2) * 2^(E - 1). Saturating everywhere above 6, NaN to +6.
inline NarrowFormat e2m1_format() {
  std::vector<double> v;
  for (int c = 0; c < 8; ++c) {
    const int e = c >> 1, m = c & 1;
    v.push_back(e == 0 ? m * 0.5 : (1.0 + m / 2.0) * std::ldexp(1.0, e - 1));
  }
  return {"e2m1", v, 0x08, 7.0, 0x07, 0x07, false};
}

/// The boundary table of a format: magnitude patterns of binary32 from which the nearest code is found by counting
/// boundaries passed. boundary[k] is the binary32 pattern of the midpoint of values[k] and values[k+1] (exact: the
/// midpoints have a few significant bits), and a magnitude equal to it goes up only when code k is odd (ties to even).
class BoundaryModel {
 public:
  explicit BoundaryModel(NarrowFormat f) : f_(std::move(f)) {
    for (size_t k = 0; k + 1 < f_.values.size(); ++k) mids_.push_back(mid_bits((f_.values[k] + f_.values[k + 1]) / 2));
    overflow_bits_ = mid_bits(f_.overflow_tie);
  }

  const NarrowFormat& format() const { return f_; }

  /// The expected code of the binary32 pattern u.
  uint8_t expect(uint32_t u) const {
    const uint32_t a = u & 0x7FFFFFFFu;
    const uint8_t sign = (u >> 31) ? f_.sign_bit : 0;
    if (a > 0x7F800000u) return uint8_t(f_.nan_code | (f_.nan_keeps_sign ? sign : 0));
    return uint8_t(sign | magnitude(a));
  }

  /// The code of magnitude pattern a (not NaN).
  uint8_t magnitude(uint32_t a) const {
    if (a > overflow_bits_) return f_.overflow_code;
    size_t k = 0;
    while (k < mids_.size() && passes(a, k)) ++k;
    return uint8_t(k);
  }

  /// The last magnitude pattern with the same code as a (not NaN): the sweep checks a whole run against one code.
  uint32_t run_end(uint32_t a) const {
    if (a > overflow_bits_) return 0x7F800000u;  // overflow through +Inf
    size_t k = 0;
    while (k < mids_.size() && passes(a, k)) ++k;
    if (k == mids_.size()) return overflow_bits_;
    return (k & 1) ? mids_[k] - 1 : mids_[k];  // an odd code's tie goes up: the run stops before it
  }

 private:
  static uint32_t mid_bits(double m) {
    const float f = float(m);
    if (double(f) != m) std::abort();  // a boundary that binary32 cannot hold would make the model wrong
    return ref::f32_bits(f);
  }
  /// True when magnitude a lies above boundary k (a tie counts as above when code k is odd).
  bool passes(uint32_t a, size_t k) const { return a > mids_[k] || (a == mids_[k] && (k & 1)); }

  NarrowFormat f_;
  std::vector<uint32_t> mids_;
  uint32_t overflow_bits_ = 0;
};

/// Mismatches of a sweep: the count and the first lines, `f32_to_e4m3 nan x=0x43E80001 => 0x7E expected 0x7F`.
class CodeLog {
 public:
  explicit CodeLog(std::string op) : op_(std::move(op)) {}
  void record(uint32_t x, uint8_t got, uint8_t want) {
    std::lock_guard<std::mutex> lock(mu_);
    if (count_++ < 8) {
      char line[160];
      std::snprintf(line, sizeof line, "%s x=0x%08X (%a) => 0x%02X expected 0x%02X", op_.c_str(), x,
                    double(ref::f32_from_bits(x)), got, want);
      lines_.push_back(line);
    }
  }
  uint64_t count() const { return count_; }
  std::string report(uint64_t cases) const {
    std::string s;
    for (const std::string& l : lines_) s += l + "\n";
    if (count_ > lines_.size()) s += "... and " + std::to_string(count_ - lines_.size()) + " more\n";
    s += "In " + std::to_string(cases) + " cases, " +
         (count_ ? std::to_string(count_) + " errors found" : std::string("no errors found")) + " in " + op_ + ".";
    return s;
  }

 private:
  std::string op_;
  std::mutex mu_;
  uint64_t count_ = 0;
  std::vector<std::string> lines_;
};

/// Checks cast(u) == model.expect(u) for every binary32 pattern u in [first, end) (both signs: u and u | 2^31 for each
/// magnitude u < 2^31), on all hardware threads; returns the number of patterns checked. The model is asked once per
/// run of magnitudes with one code, and the run is checked against it.
template <typename Cast>
uint64_t sweep_against_model(const BoundaryModel& model, const Cast& cast, CodeLog& log, uint32_t first = 0,
                             uint64_t end = uint64_t(1) << 31) {
  const uint64_t chunk = uint64_t(1) << 22;
  std::atomic<uint64_t> next{first};
  const uint8_t sign_bit = model.format().sign_bit;
  auto check_one = [&](uint32_t u, uint8_t want) {
    const uint8_t got = cast(ref::f32_from_bits(u));
    if (got != want) log.record(u, got, want);
  };
  auto work = [&] {
    for (uint64_t lo = next.fetch_add(chunk); lo < end; lo = next.fetch_add(chunk)) {
      const uint64_t hi = std::min(end, lo + chunk);
      for (uint64_t a = lo; a < hi;) {
        if (a > 0x7F800000u) {  // NaNs: the model per pattern
          for (; a < hi; ++a) {
            check_one(uint32_t(a), model.expect(uint32_t(a)));
            check_one(uint32_t(a) | 0x80000000u, model.expect(uint32_t(a) | 0x80000000u));
          }
          break;
        }
        const uint8_t pos = model.magnitude(uint32_t(a)), neg = uint8_t(pos | sign_bit);
        const uint64_t stop = std::min<uint64_t>(hi, uint64_t(model.run_end(uint32_t(a))) + 1);
        uint32_t bad = 0;
        for (uint64_t b = a; b < stop; ++b) {
          bad += cast(ref::f32_from_bits(uint32_t(b))) != pos;
          bad += cast(ref::f32_from_bits(uint32_t(b) | 0x80000000u)) != neg;
        }
        if (bad)  // again, one by one, for the record
          for (uint64_t b = a; b < stop; ++b) {
            check_one(uint32_t(b), pos);
            check_one(uint32_t(b) | 0x80000000u, neg);
          }
        a = stop;
      }
    }
  };
  run_workers(worker_count(), [&](unsigned) { work(); });
  return 2 * (end - first);
}

}  // namespace fuseproof::test
