// mismatch_log.h: TestFloat-style mismatch records: one line each, hex first, at most N lines, then the total.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/dtype.h"

namespace fuseproof::test {

/// Collects mismatches of one op and dtype. A line reads
///   bias_gelu_tanh bf16 [r=3,c=4097] x=0x3F80 b=0x3C00 => 0x3F8A expected 0x3F8B (1 ulp)
/// and a clean run reads "In 4294967296 cases, no errors found in bias_gelu_tanh bf16."
class MismatchLog {
 public:
  MismatchLog(std::string op, ref::Dtype dtype, size_t max_lines = 8);

  /// Records a mismatch; `where` is a position such as "r=3,c=4097" (may be empty); b is omitted when has_bias=false.
  void record(const std::string& where, uint16_t x, uint16_t b, uint16_t got, uint16_t expected, bool has_bias = true);
  /// Records a mismatch whose line is already formatted (common/testfloat_record.h, for ops with a binary32 side).
  void record_line(std::string line);
  /// Compares and records; returns true when equal.
  bool check(const std::string& where, uint16_t x, uint16_t b, uint16_t got, uint16_t expected, bool has_bias = true) {
    if (got == expected) return true;
    record(where, x, b, got, expected, has_bias);
    return false;
  }
  /// Merges another log's count and lines (for per-thread logs).
  void merge(const MismatchLog& other);

  uint64_t count() const { return count_; }
  bool clean() const { return count_ == 0; }
  const std::vector<std::string>& lines() const { return lines_; }

  /// The report: the first lines, "... and N more", then "In C cases, N errors found in OP DTYPE." (or no errors).
  std::string report(uint64_t cases) const;
  /// Writes report(cases) plus every kept line to build/failures/<name>.txt; returns the path (empty on failure).
  std::string dump(const std::string& name, uint64_t cases) const;

  /// One record line (common/testfloat_record.h).
  static std::string format(const std::string& op, ref::Dtype dtype, const std::string& where, uint16_t x,
                            uint16_t b, uint16_t got, uint16_t expected, bool has_bias);

 private:
  std::string op_;
  ref::Dtype dtype_;
  size_t max_lines_;
  uint64_t count_ = 0;
  std::vector<std::string> lines_;
};

}  // namespace fuseproof::test

/// Fails the current test with the log's report when it holds any mismatch; carries __FILE__/__LINE__.
#define FUSEPROOF_EXPECT_CLEAN(log, cases)                                                               \
  do {                                                                                                  \
    const auto& fp_log_ = (log);                                                                        \
    const uint64_t fp_cases_ = (cases);                                                                 \
    if (!fp_log_.clean()) {                                                                             \
      ADD_FAILURE_AT(__FILE__, __LINE__) << fp_log_.report(fp_cases_)                                   \
                                         << "\nfailure dump: " << fp_log_.dump(                         \
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name(), \
                                                fp_cases_);                                             \
    } else {                                                                                            \
      std::printf("%s\n", fp_log_.report(fp_cases_).c_str());                                           \
    }                                                                                                   \
  } while (0)
