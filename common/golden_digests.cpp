// golden_digests.cpp: reading digests.json.
#include "common/golden_digests.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/golden_verify.h"

namespace fuseproof {

std::optional<std::string> read_golden_digest(const std::string& path, const std::string& op, ref::Dtype d) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  verify_golden_file(path);  // against provenance.json beside it: corrupt data is never read as evidence
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + " is not valid JSON: " + e.what());
  }
  const char* dtype = ref::dtype_name(d);
  if (!j.is_object() || !j.contains(op) || !j[op].is_object() || !j[op].contains(dtype)) return std::nullopt;
  if (!j[op][dtype].is_string()) throw std::runtime_error(path + ": " + op + "." + dtype + " is not a string");
  return j[op][dtype].get<std::string>();
}

std::string require_golden_digest(const std::string& path, const std::string& op, ref::Dtype d) {
  auto digest = read_golden_digest(path, op, d);
  if (!digest) throw std::runtime_error(path + " has no " + op + "." + ref::dtype_name(d) + " digest");
  return *digest;
}

}  // namespace fuseproof
