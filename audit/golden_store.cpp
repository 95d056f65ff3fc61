// golden_store.cpp: golden data lookup.
#include "audit/golden_store.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/golden_digests.h"

namespace fuseproof::audit {

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
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("sm_", 0) == 0) archs.push_back(name);
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::optional<std::string> golden_digest(const std::string& golden_dir, const std::string& arch, const std::string& op,
                                         ref::Dtype d) {
  return read_golden_digest(golden_dir + "/" + arch + "/digests.json", op, d);
}

std::string golden_gelu_table_path(const std::string& golden_dir, const std::string& arch, ref::Dtype d) {
  return golden_dir + "/" + arch + "/gelu_tanh_" + ref::dtype_name(d) + ".bin";
}

bool can_write(const std::string& path, std::string* why) {
  const bool existed = std::filesystem::exists(path);
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) {
    if (why) *why = std::strerror(errno);
    return false;
  }
  out.close();
  if (!existed) std::filesystem::remove(path);
  return true;
}

}  // namespace fuseproof::audit
