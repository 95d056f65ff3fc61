// golden_store.cpp: golden data lookup and verification against provenance.json.
#include "audit/golden_store.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/golden_digests.h"
#include "common/golden_verify.h"
#include "reference/gelu_table.h"

namespace fuseproof::audit {

namespace fs = std::filesystem;


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
  fuseproof::verify_golden_file(golden_dir + "/" + arch + "/" + file);
}

void verify_mufu_tables(const std::string& golden_dir, const std::string& golden_build_dir, const std::string& arch) {
  const std::string prov = golden_dir + "/" + arch + "/provenance.json";
  for (const char* name : {"mufu_ex2_approx_ftz.bin", "mufu_rcp_approx_ftz.bin"})
    verify_unpacked_golden_file(golden_build_dir + "/" + arch + "/" + name, prov, arch);
}

std::optional<std::string> golden_digest(const std::string& golden_dir, const std::string& arch, const std::string& op,
                                         ref::Dtype d) {
  const std::string path = golden_dir + "/" + arch + "/digests.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  verify_golden_file(golden_dir, arch, "digests.json");
  std::optional<std::string> v;
  try {
    v = read_golden_digest(path, op, d);
  } catch (const std::exception& e) {
    throw CorruptDataError(e.what());
  }
  if (v && (v->size() != 64 || v->find_first_not_of("0123456789abcdef") != std::string::npos))
    throw CorruptDataError(path + " entry " + op + "." + ref::dtype_name(d) + " is not a 64-digit SHA-256");
  return v;
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
