// golden_verify.cpp: provenance.json lookups and SHA-256 comparisons.
#include "common/golden_verify.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/sha256.h"

namespace fuseproof {

namespace fs = std::filesystem;

namespace {

nlohmann::json provenance(const std::string& prov, const std::string& arch) {
  std::error_code ec;
  if (!fs::is_regular_file(prov, ec)) throw MissingDataError(prov + " is missing");
  std::ifstream in(prov);
  if (!in) throw MissingDataError("cannot read " + prov + ": " + std::strerror(errno));
  nlohmann::json p = nlohmann::json::parse(in, nullptr, false);
  if (!p.is_object()) throw CorruptDataError(prov + " is not a JSON object");
  if (!p.contains("arch") || !p["arch"].is_string()) throw CorruptDataError(prov + " has no \"arch\" entry");
  if (p["arch"].get<std::string>() != arch)
    throw CorruptDataError(prov + " describes " + p["arch"].get<std::string>() + ", expected " + arch);
  return p;
}

void check(const std::string& path, const nlohmann::json& files, const std::string& prov) {
  const std::string name = fs::path(path).filename().string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw MissingDataError(path + " is missing");
  if (!files.is_object() || !files.contains(name) || !files[name].is_string())
    throw CorruptDataError(prov + " records no SHA-256 for " + name);
  const std::string want = files[name].get<std::string>();
  std::string got;
  try {
    got = Sha256::of_file(path);
  } catch (const std::exception& e) {
    throw MissingDataError(e.what());
  }
  if (got != want) throw CorruptDataError(path + " has SHA-256 " + got + ", expected " + want + " from " + prov);
}

}  // namespace

void verify_golden_file(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  const std::string prov = (dir / "provenance.json").string();
  const nlohmann::json p = provenance(prov, dir.filename().string());
  check(path, p.value("files", nlohmann::json::object()), prov);
}

void verify_unpacked_golden_file(const std::string& path, const std::string& provenance_path, const std::string& arch) {
  const nlohmann::json p = provenance(provenance_path, arch);
  const nlohmann::json mufu = p.value("mufu", nlohmann::json::object());
  check(path, mufu.is_object() ? mufu.value("files", nlohmann::json::object()) : nlohmann::json(), provenance_path);
}

}  // namespace fuseproof
