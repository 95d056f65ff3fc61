// golden_store.cpp: golden data lookup and verification against provenance.json.
#include "audit/golden_store.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/sha256.h"
#include "reference/gelu_table.h"

namespace fuseproof::audit {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw MissingDataError(path + " is missing");
  std::ifstream in(path);
  if (!in) throw MissingDataError("cannot read " + path + ": " + std::strerror(errno));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw CorruptDataError(path + " is not valid JSON");
  }
}

nlohmann::json provenance(const std::string& golden_dir, const std::string& arch) {
  const std::string path = golden_dir + "/" + arch + "/provenance.json";
  nlohmann::json p = read_json(path);
  if (!p.is_object() || !p.contains("arch") || !p["arch"].is_string())
    throw CorruptDataError(path + " has no \"arch\" entry");
  if (p["arch"].get<std::string>() != arch)
    throw CorruptDataError(path + " describes " + p["arch"].get<std::string>() + ", expected " + arch);
  return p;
}

/// Checks `path` against `want` (hex SHA-256 from the provenance at `prov`).
void check_digest(const std::string& path, const nlohmann::json& files, const std::string& key, const std::string& prov) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw MissingDataError(path + " is missing");
  if (!files.is_object() || !files.contains(key) || !files[key].is_string())
    throw CorruptDataError(prov + " records no SHA-256 for " + key);
  const std::string want = files[key].get<std::string>();
  std::string got;
  try {
    got = Sha256::of_file(path);
  } catch (const std::exception& e) {
    throw MissingDataError(e.what());
  }
  if (got != want)
    throw CorruptDataError(path + " has SHA-256 " + got + ", expected " + want + " from " + prov);
}

}  // namespace

std::string default_golden_dir() {
  const char* e = std::getenv("FUSEPROOF_GOLDEN_DIR");
  return e && *e ? e : FUSEPROOF_DEFAULT_GOLDEN_DIR;
}

std::string default_golden_build_dir() {
  const char* e = std::getenv("FUSEPROOF_GOLDEN_BUILD_DIR");
  return e && *e ? e : FUSEPROOF_DEFAULT_GOLDEN_BUILD_DIR;
}

std::vector<std::string> golden_archs(const std::string& golden_dir) {
  std::vector<std::string> archs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(golden_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("sm_", 0) == 0) archs.push_back(name);
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

void verify_golden_file(const std::string& golden_dir, const std::string& arch, const std::string& file) {
  const std::string prov = golden_dir + "/" + arch + "/provenance.json";
  const nlohmann::json p = provenance(golden_dir, arch);
  check_digest(golden_dir + "/" + arch + "/" + file, p.value("files", nlohmann::json::object()), file, prov);
}

void verify_mufu_tables(const std::string& golden_dir, const std::string& golden_build_dir, const std::string& arch) {
  const std::string prov = golden_dir + "/" + arch + "/provenance.json";
  const nlohmann::json p = provenance(golden_dir, arch);
  const nlohmann::json mufu = p.value("mufu", nlohmann::json::object());
  const nlohmann::json files = mufu.is_object() ? mufu.value("files", nlohmann::json::object()) : nlohmann::json();
  if (!files.is_object() || files.empty()) throw CorruptDataError(prov + " records no MUFU table digests");
  for (const auto& [name, digest] : files.items())
    check_digest(golden_build_dir + "/" + arch + "/" + name, files, name, prov);
}

std::optional<std::string> golden_digest(const std::string& golden_dir, const std::string& arch, const std::string& op,
                                         ref::Dtype d) {
  const std::string path = golden_dir + "/" + arch + "/digests.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  verify_golden_file(golden_dir, arch, "digests.json");
  const nlohmann::json j = read_json(path);
  if (!j.is_object()) throw CorruptDataError(path + " is not a JSON object");
  if (!j.contains(op) || !j[op].is_object() || !j[op].contains(ref::dtype_name(d))) return std::nullopt;
  const auto& v = j[op][ref::dtype_name(d)];
  if (!v.is_string() || v.get<std::string>().size() != 64)
    throw CorruptDataError(path + " entry " + op + "." + ref::dtype_name(d) + " is not a 64-digit SHA-256");
  return v.get<std::string>();
}

std::string golden_gelu_table_path(const std::string& golden_dir, const std::string& arch, ref::Dtype d) {
  return golden_dir + "/" + arch + "/gelu_tanh_" + ref::dtype_name(d) + ".bin";
}

std::vector<uint16_t> read_golden_gelu_table(const std::string& golden_dir, const std::string& arch, ref::Dtype d) {
  const std::string path = golden_gelu_table_path(golden_dir, arch, d);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw MissingDataError(path + " is missing");
  const auto size = fs::file_size(path, ec);
  if (!ec && size != 65536 * 2)
    throw CorruptDataError(path + " holds " + std::to_string(size) + " bytes, expected 131072 (65536 uint16 entries)");
  verify_golden_file(golden_dir, arch, fs::path(path).filename().string());
  try {
    return ref::read_u16_table(path);
  } catch (const std::exception& e) {
    throw CorruptDataError(e.what());
  }
}

bool can_write(const std::string& path, std::string* why) {
  const bool existed = fs::exists(path);
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) {
    if (why) *why = std::strerror(errno);
    return false;
  }
  out.close();
  if (!existed) fs::remove(path);
  return true;
}

}  // namespace fuseproof::audit
