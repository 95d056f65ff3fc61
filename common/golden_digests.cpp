// golden_digests.cpp: reading digests.json.
#include "common/golden_digests.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/golden_verify.h"

namespace fuseproof {

std::optional<std::string> read_golden_digest(const std::string& path, const std::string& op, ref::Dtype d) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  verify_golden_file(path);  // against provenance.json beside it: corrupt data is never read as evidence
  std::ifstream in(path);
  if (!in) throw MissingDataError("cannot read " + path + ": " + std::strerror(errno));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw CorruptDataError(path + " is not valid JSON");
  }
  if (!j.is_object()) throw CorruptDataError(path + " is not a JSON object");
  const char* dtype = ref::dtype_name(d);
  if (!j.contains(op) || !j[op].is_object() || !j[op].contains(dtype)) return std::nullopt;
  const auto& v = j[op][dtype];
  const bool hex64 = v.is_string() && v.get<std::string>().size() == 64 &&
                     v.get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex64) throw CorruptDataError(path + " entry " + op + "." + dtype + " is not a 64-digit SHA-256");
  return v.get<std::string>();
}

std::string require_golden_digest(const std::string& path, const std::string& op, ref::Dtype d) {
  auto digest = read_golden_digest(path, op, d);
  if (!digest) throw MissingDataError(path + " has no " + op + "." + ref::dtype_name(d) + " digest");
  return *digest;
}

}  // namespace fuseproof
