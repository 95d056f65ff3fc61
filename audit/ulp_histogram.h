// ulp_histogram.h: how far a kernel's outputs lie from another set (the contract's result, the correctly rounded
// value), counted in the 16-bit dtype's units in the last place, with the cases ULPs cannot measure kept apart.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/dtype.h"

namespace fuseproof::audit {

enum class Distance : int {
  kExact,         ///< the same bits
  kOne,           ///< 1 ulp
  kTwo,           ///< 2 ulps
  kThreeToTen,    ///< 3..10 ulps
  kMore,          ///< more than 10 ulps (an infinity against a finite value lands here too)
  kNanForNumber,  ///< NaN where a number is expected
  kNumberForNan,  ///< a number where NaN is expected
  kZeroSign,      ///< +0 against -0: the sign of zero alone
  kNanPattern,    ///< two NaNs of different bits
};
inline constexpr int kDistances = 9;

/// "0", "1", "2", "3-10", ">10", "NaN for number", "number for NaN", "sign of zero", "NaN pattern".
const char* distance_name(Distance d);

/// Where `got` lies from `want` (two patterns of dtype d).
Distance distance_of(ref::Dtype d, uint16_t got, uint16_t want);

class UlpHistogram {
 public:
  void add(ref::Dtype d, uint16_t got, uint16_t want) { ++bins_[size_t(distance_of(d, got, want))]; }
  void add_exact(uint64_t n) { bins_[0] += n; }
  /// Counts n cases at a distance found elsewhere (quantization codes: steps along the format's magnitude order).
  void add(Distance d, uint64_t n = 1) { bins_[size_t(d)] += n; }
  void merge(const UlpHistogram& o);
  uint64_t total() const;
  uint64_t count(Distance d) const { return bins_[size_t(d)]; }
  bool empty() const { return total() == 0; }
  /// "0: 4294967000, 1: 296" (the non-empty bins, in order).
  std::string line() const;
  nlohmann::json json() const;
  static UlpHistogram from_json(const nlohmann::json& j);

 private:
  std::array<uint64_t, kDistances> bins_{};
};

}  // namespace fuseproof::audit
