// mismatch_log.cpp: formatting and dumping TestFloat-style records.
#include "property_tests/support/mismatch_log.h"

#include "common/testfloat_record.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fuseproof::test {

MismatchLog::MismatchLog(std::string op, ref::Dtype dtype, size_t max_lines)
    : op_(std::move(op)), dtype_(dtype), max_lines_(max_lines) {}

std::string MismatchLog::format(const std::string& op, ref::Dtype dtype, const std::string& where, uint16_t x,
                                uint16_t b, uint16_t got, uint16_t expected, bool has_bias) {
  return testfloat_record(op, dtype, where, x, has_bias ? std::optional<uint16_t>(b) : std::nullopt, got, expected);
}

void MismatchLog::record(const std::string& where, uint16_t x, uint16_t b, uint16_t got, uint16_t expected,
                         bool has_bias) {
  ++count_;
  if (lines_.size() < max_lines_) lines_.push_back(format(op_, dtype_, where, x, b, got, expected, has_bias));
}

void MismatchLog::record_line(std::string line) {
  ++count_;
  if (lines_.size() < max_lines_) lines_.push_back(std::move(line));
}

void MismatchLog::merge(const MismatchLog& other) {
  count_ += other.count_;
  for (const auto& l : other.lines_)
    if (lines_.size() < max_lines_) lines_.push_back(l);
}

std::string MismatchLog::report(uint64_t cases) const {
  std::ostringstream os;
  for (const auto& l : lines_) os << l << "\n";
  if (count_ > lines_.size()) os << "... and " << (count_ - lines_.size()) << " more\n";
  if (count_ == 0)
    os << "In " << cases << " cases, no errors found in " << op_ << " " << ref::dtype_name(dtype_) << ".";
  else
    os << "In " << cases << " cases, " << count_ << " errors found in " << op_ << " " << ref::dtype_name(dtype_) << ".";
  return os.str();
}

std::string MismatchLog::dump(const std::string& name, uint64_t cases) const {
  std::error_code ec;
  std::filesystem::create_directories("failures", ec);
  std::string safe = name;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  const std::string path = "failures/" + op_ + "_" + ref::dtype_name(dtype_) + "_" + safe + ".txt";
  std::ofstream out(path);
  if (!out) return "";
  out << report(cases) << "\n";
  return std::filesystem::absolute(path, ec).string();
}

}  // namespace fuseproof::test
