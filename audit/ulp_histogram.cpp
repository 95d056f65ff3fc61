// ulp_histogram.cpp: distance classes and their counts.
#include "audit/ulp_histogram.h"

namespace fuseproof::audit {

const char* distance_name(Distance d) {
  // In the order of the enumerators (ulp_histogram.h).
  static constexpr std::array<const char*, kDistances> kNames{
      "0", "1", "2", "3-10", ">10", "NaN for number", "number for NaN", "sign of zero", "NaN pattern"};
  const int i = int(d);
  return i >= 0 && i < kDistances ? kNames[size_t(i)] : "?";
}

Distance distance_of(ref::Dtype d, uint16_t got, uint16_t want) {
  if (got == want) return Distance::kExact;
  const bool gn = ref::is_nan_bits(d, got), wn = ref::is_nan_bits(d, want);
  if (gn && wn) return Distance::kNanPattern;
  if (gn) return Distance::kNanForNumber;
  if (wn) return Distance::kNumberForNan;
  const uint32_t u = ref::ulp_distance(got, want);
  if (u == 0) return Distance::kZeroSign;  // -0 and +0: the only pair at distance 0 with different bits
  if (u == 1) return Distance::kOne;
  if (u == 2) return Distance::kTwo;
  return u <= 10 ? Distance::kThreeToTen : Distance::kMore;
}

void UlpHistogram::merge(const UlpHistogram& o) {
  for (int i = 0; i < kDistances; ++i) bins_[size_t(i)] += o.bins_[size_t(i)];
}

uint64_t UlpHistogram::total() const {
  uint64_t t = 0;
  for (uint64_t b : bins_) t += b;
  return t;
}

std::string UlpHistogram::line() const {
  std::string s;
  for (int i = 0; i < kDistances; ++i)
    if (bins_[size_t(i)])
      s += (s.empty() ? "" : ", ") + std::string(distance_name(Distance(i))) + ": " + std::to_string(bins_[size_t(i)]);
  return s.empty() ? "(no cases)" : s;
}

nlohmann::json UlpHistogram::json() const {
  nlohmann::json j = nlohmann::json::object();
  for (int i = 0; i < kDistances; ++i) j[distance_name(Distance(i))] = bins_[size_t(i)];
  return j;
}

UlpHistogram UlpHistogram::from_json(const nlohmann::json& j) {
  UlpHistogram h;
  for (int i = 0; i < kDistances; ++i) h.bins_[size_t(i)] = j.value(distance_name(Distance(i)), uint64_t(0));
  return h;
}

}  // namespace fuseproof::audit
