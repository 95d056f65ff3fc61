// golden_library.cpp: golden data lookup and verification against provenance.json.
#include "common/golden_library.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/quoted_value.h"
#include "common/sha256.h"
#include "reference/activation_table.h"

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

std::string env_or(const char* name, const char* fallback) {
  const char* e = std::getenv(name);
  return e && *e ? e : fallback;
}

template <class T>
std::vector<T> table(const GoldenArch& g, const std::string& file, std::vector<T> (*read)(const std::string&)) {
  const std::string p = g.path(file);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) throw MissingDataError(p + " is missing");
  const auto size = fs::file_size(p, ec);
  const size_t want = 65536 * sizeof(T);
  if (!ec && size != want)
    throw CorruptDataError(p + " holds " + std::to_string(size) + " bytes, expected " + std::to_string(want) +
                           " (65536 uint" + std::to_string(8 * sizeof(T)) + " entries)");
  g.verify(file);
  try {
    return read(p);
  } catch (const std::exception& e) {
    throw CorruptDataError(e.what());
  }
}

}  // namespace

std::string default_golden_dir() { return env_or("FUSEPROOF_GOLDEN_DIR", FUSEPROOF_DEFAULT_GOLDEN_DIR); }
std::string default_golden_build_dir() {
  return env_or("FUSEPROOF_GOLDEN_BUILD_DIR", FUSEPROOF_DEFAULT_GOLDEN_BUILD_DIR);
}

bool is_arch_name(const std::string& name) {
  // sm_ DD[D] [a|f]; checked by hand (std::regex is slow to build and throws on bad input of its own)
  if (name.size() < 5 || name.compare(0, 3, "sm_") != 0) return false;
  size_t i = 3;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  const size_t digits = i - 3;
  if (digits < 2 || digits > 3) return false;
  if (i < name.size() && (name[i] == 'a' || name[i] == 'f')) ++i;
  return i == name.size();
}

std::string arch_name_error(const std::string& name) {
  if (is_arch_name(name)) return "";
  return "must be sm_<digits> (e.g. sm_90), got " + quoted_value(name);
}

void require_arch_name(const std::string& name) {
  const std::string why = arch_name_error(name);
  if (!why.empty()) throw UsageError("--arch: " + why);
}

std::vector<std::string> golden_archs(const std::string& golden_dir) {
  std::vector<std::string> archs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(golden_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && is_arch_name(name)) archs.push_back(name);
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string resolve_golden_arch(const std::string& golden_dir, const std::string& requested,
                                const std::string& device_arch) {
  if (!requested.empty()) {
    require_arch_name(requested);
    return requested;
  }
  if (!device_arch.empty()) return device_arch;
  const auto archs = golden_archs(golden_dir);
  if (archs.size() == 1) return archs[0];
  std::string list;
  for (const auto& a : archs) list += (list.empty() ? "" : ", ") + a;
  if (archs.empty()) {
    // A folder with no architecture in it is evidence missing (3); a path that is no folder at all, a bad option (2).
    std::error_code ec;
    if (!fs::is_directory(golden_dir, ec)) throw UsageError("golden: --golden-dir " + golden_dir + " is not a directory");
    throw MissingDataError("golden: no golden/sm_* folder under " + golden_dir + " (golden data missing)");
  }
  throw UsageError("golden: several architectures under " + golden_dir + " (" + list + "); name one with --arch");
}

std::string golden_digest_key(const std::string& op, ref::Contract c) {
  return c == ref::Contract::kEager ? op : op + "." + ref::contract_name(c);
}

std::string golden_stage_digest_key(const std::string& digest_key, int stage) {
  return digest_key + ".stage" + std::to_string(stage);
}

std::string golden_table_file(ref::Activation a, ref::Dtype d, bool f32) {
  return std::string(ref::activation_name(a)) + (f32 ? "_f32_" : "_") + ref::dtype_name(d) + ".bin";
}

void verify_golden_file(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  const std::string prov = (dir / "provenance.json").string();
  const nlohmann::json p = provenance(prov, dir.filename().string());
  check(path, p.value("files", nlohmann::json::object()), prov);
}

void verify_unpacked_golden_file(const std::string& path, const std::string& provenance_path, const std::string& arch,
                                 const std::string& section) {
  const nlohmann::json p = provenance(provenance_path, arch);
  const nlohmann::json s = p.value(section, nlohmann::json::object());
  check(path, s.is_object() ? s.value("files", nlohmann::json::object()) : nlohmann::json(), provenance_path);
}

namespace {

/// digests.json's entry j[key][dtype] (or j[key] when dtype is null), verified, a 64-digit hex SHA-256; nullopt when
/// the file or the entry is missing.
std::optional<std::string> read_digest_entry(const std::string& path, const std::string& key, const char* dtype) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
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
  if (!j.contains(key)) return std::nullopt;
  const nlohmann::json* v = &j[key];
  if (dtype) {
    if (!v->is_object() || !v->contains(dtype)) return std::nullopt;
    v = &(*v)[dtype];
  }
  const bool hex64 = v->is_string() && v->get<std::string>().size() == 64 &&
                     v->get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex64)
    throw CorruptDataError(path + " entry " + key + (dtype ? std::string(".") + dtype : std::string()) +
                           " is not a 64-digit SHA-256");
  return v->get<std::string>();
}

}  // namespace

std::optional<std::string> read_golden_digest(const std::string& path, const std::string& key, ref::Dtype d) {
  return read_digest_entry(path, key, ref::dtype_name(d));
}

std::optional<std::string> read_golden_format_digest(const std::string& path, const std::string& cast) {
  return read_digest_entry(path, "format." + cast + "_tree", nullptr);
}

GoldenArch::GoldenArch(std::string golden_dir, std::string build_dir, std::string arch)
    : dir_(std::move(golden_dir)), build_dir_(std::move(build_dir)), arch_(std::move(arch)) {}

std::string GoldenArch::path(const std::string& file) const { return dir_ + "/" + arch_ + "/" + file; }

bool GoldenArch::has(const std::string& file) const {
  std::error_code ec;
  return fs::is_regular_file(path(file), ec);
}

void GoldenArch::verify(const std::string& file) const { verify_golden_file(path(file)); }

std::vector<uint16_t> GoldenArch::u16_table(const std::string& file) const {
  return table<uint16_t>(*this, file, &ref::read_u16_table);
}

std::vector<uint32_t> GoldenArch::u32_table(const std::string& file) const {
  return table<uint32_t>(*this, file, &ref::read_u32_table);
}

std::optional<std::string> GoldenArch::digest(const std::string& key, ref::Dtype d) const {
  return read_golden_digest(path("digests.json"), key, d);
}

std::string GoldenArch::require_digest(const std::string& key, ref::Dtype d) const {
  auto v = digest(key, d);
  if (!v) throw MissingDataError(path("digests.json") + " has no " + key + "." + ref::dtype_name(d) + " digest");
  return *v;
}

bool GoldenArch::has_mufu() const {
  std::error_code ec;
  return fs::is_regular_file(build_dir_ + "/" + arch_ + "/mufu_ex2_approx_ftz.bin", ec);
}

std::shared_ptr<const ref::MufuModel> GoldenArch::mufu_shared() const {
  mufu();
  return mufu_;
}

const ref::MufuModel& GoldenArch::mufu() const {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (mufu_) return *mufu_;
  const std::string unpacked = build_dir_ + "/" + arch_;
  const std::string prov = path("provenance.json");
  // The unpacked files must be the ones provenance.json records (a stale build tree is refused, not trusted).
  for (const char* name : {"mufu_ex2_approx_ftz.bin", "mufu_rcp_approx_ftz.bin"})
    verify_unpacked_golden_file(unpacked + "/" + name, prov, arch_, "mufu");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(unpacked, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ex2_", 0) == 0 && e.path().extension() == ".bin")
      verify_unpacked_golden_file(e.path().string(), prov, arch_, "ex2_points");
  }
  try {
    mufu_ = std::make_shared<const ref::MufuModel>(ref::MufuModel::load(unpacked));
  } catch (const std::runtime_error& e) {
    throw CorruptDataError(e.what());
  }
  return *mufu_;
}

}  // namespace fuseproof
