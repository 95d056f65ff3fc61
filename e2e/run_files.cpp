// run_files.cpp: run.json's shape, the paths it names confined to the run directory, its frame files re-hashed.
#include "run_files.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "common/exit_status.h"
#include "common/path_inside.h"
#include "common/quoted_value.h"
#include "common/sha256.h"
#include "run_manifest.h"

namespace fuseproof::e2e {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxModeName = 64;
constexpr int64_t kMaxFrames = 100000;
constexpr int64_t kMaxSide = 16384;
constexpr uintmax_t kMaxManifestBytes = 64u << 20;  // a default run's run.json is some 30 KB
constexpr size_t kChunk = 1 << 20;

std::string manifest_of(const std::string& run_dir) { return (fs::path(run_dir) / "run.json").string(); }

/// A JSON value for a message: strings quoted as they are, anything else as compact JSON (both cut and escaped).
std::string shown(const nlohmann::json* v) {
  if (v == nullptr) return "nothing";
  if (v->is_string()) return quoted_value(v->get<std::string>());
  return quoted_value(v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

[[noreturn]] void corrupt(const std::string& manifest, const std::string& field, const std::string& rule,
                          const nlohmann::json* value) {
  throw CorruptDataError("'" + manifest + "': " + field + " " + rule + ", got " + shown(value));
}

const nlohmann::json* member(const nlohmann::json& o, const char* key) {
  return o.is_object() && o.contains(key) ? &o[key] : nullptr;
}

bool is_sha256(const nlohmann::json* v) {
  if (v == nullptr || !v->is_string()) return false;
  const std::string& s = v->get_ref<const std::string&>();
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

int64_t integer_in(const std::string& manifest, const nlohmann::json& m, const std::string& field, const char* key,
                   int64_t hi) {
  const nlohmann::json* v = member(m, key);
  if (v == nullptr || !v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > hi)
    corrupt(manifest, field + "." + key, "must be an integer in [1, " + std::to_string(hi) + "]", v);
  return v->get<int64_t>();
}

void check_mode(const std::string& run_dir, const std::string& manifest, const std::string& mode,
                const nlohmann::json& m) {
  const std::string field = "runs." + mode;
  if (!m.is_object()) corrupt(manifest, field, "must be an object", &m);
  const int64_t frames = integer_in(manifest, m, field, "frames", kMaxFrames);
  integer_in(manifest, m, field, "width", kMaxSide);
  integer_in(manifest, m, field, "height", kMaxSide);
  const nlohmann::json* hashes = member(m, "frame_sha256");
  if (hashes == nullptr || !hashes->is_array() || int64_t(hashes->size()) != frames) {
    const std::string got = hashes && hashes->is_array() ? std::to_string(hashes->size()) + " entries" : shown(hashes);
    throw CorruptDataError("'" + manifest + "': " + field + ".frame_sha256 must list one SHA-256 per frame (" +
                           std::to_string(frames) + "), got " + got);
  }
  for (size_t i = 0; i < hashes->size(); ++i)
    if (!is_sha256(&(*hashes)[i]))
      corrupt(manifest, field + ".frame_sha256[" + std::to_string(i) + "]", "must be a 64-hex SHA-256", &(*hashes)[i]);
  if (!is_sha256(member(m, "rgb24_sha256")))
    corrupt(manifest, field + ".rgb24_sha256", "must be a 64-hex SHA-256", member(m, "rgb24_sha256"));
  if (m.contains("mp4_sha256") && !is_sha256(member(m, "mp4_sha256")))
    corrupt(manifest, field + ".mp4_sha256", "must be a 64-hex SHA-256", member(m, "mp4_sha256"));
  const nlohmann::json* files = member(m, "files");
  if (files == nullptr) return;
  if (!files->is_object()) corrupt(manifest, field + ".files", "must be an object", files);
  for (const auto& [kind, path] : files->items()) {
    if (kind != "rgb24" && kind != "y4m" && kind != "mp4") {
      const nlohmann::json key = kind;
      corrupt(manifest, field + ".files", "keys must be rgb24, y4m or mp4", &key);
    }
    if (!path.is_string() || !path_inside(run_dir, path.get<std::string>()))
      corrupt(manifest, field + ".files." + kind, "must name a file inside the run directory", &path);
  }
}

/// Opens `path` (a file run.json records as `field`) for reading; CorruptDataError when it is missing or not a
/// regular file (a FIFO or a device would be read without bound).
std::unique_ptr<FILE, int (*)(FILE*)> open_recorded(const std::string& path, const std::string& shown_path,
                                                    const std::string& field, uintmax_t* bytes) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw CorruptDataError("'" + shown_path + "' (" + field + " in run.json) is missing");
  if (!fs::is_regular_file(st))
    throw CorruptDataError("'" + shown_path + "' (" + field + " in run.json) is not a regular file");
  *bytes = fs::file_size(path, ec);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (ec || !f) throw CorruptDataError("'" + shown_path + "' (" + field + " in run.json) cannot be read");
  return f;
}

/// The rgb24 file of one mode, streamed a chunk at a time: its size, each frame's SHA-256 and the whole file's.
int64_t verify_rgb24(const std::string& path, const std::string& shown_path, const std::string& mode,
                     const nlohmann::json& m) {
  const std::string field = "runs." + mode + ".files.rgb24";
  const int64_t frames = m["frames"].get<int64_t>();
  const uintmax_t frame_bytes = uintmax_t(m["width"].get<int64_t>()) * uintmax_t(m["height"].get<int64_t>()) * 3;
  const uintmax_t want = frame_bytes * uintmax_t(frames);
  const std::string shape = std::to_string(frames) + " frames of " + std::to_string(m["width"].get<int64_t>()) + "x" +
                            std::to_string(m["height"].get<int64_t>()) + " rgb24, " + std::to_string(want) + " bytes";
  uintmax_t bytes = 0;
  auto f = open_recorded(path, shown_path, field, &bytes);
  const auto wrong_size = [&](uintmax_t got) {
    return CorruptDataError("'" + shown_path + "' " + (got < want ? "is truncated" : "is longer than run.json says") +
                            ": " + std::to_string(got) + " bytes, runs." + mode + " records " + shape);
  };
  if (bytes != want) throw wrong_size(bytes);
  Sha256 whole;
  std::vector<unsigned char> buf(kChunk);
  int64_t bad = 0, first_bad = -1;
  std::string first_got;
  uintmax_t done = 0;
  for (int64_t i = 0; i < frames; ++i) {
    Sha256 frame;
    for (uintmax_t left = frame_bytes; left > 0;) {
      const size_t n = std::fread(buf.data(), 1, size_t(std::min<uintmax_t>(left, buf.size())), f.get());
      if (n == 0) throw wrong_size(done);  // shrank while read, or a read error
      frame.update(buf.data(), n);
      whole.update(buf.data(), n);
      left -= n;
      done += n;
    }
    const std::string got = frame.hex();
    if (got != m["frame_sha256"][size_t(i)].get<std::string>()) {
      if (bad++ == 0) first_bad = i, first_got = got;
    }
  }
  if (std::fgetc(f.get()) != EOF) throw wrong_size(done + 1);
  if (bad > 0) {
    throw CorruptDataError("'" + shown_path + "': " + std::to_string(bad) + " of " + std::to_string(frames) +
                           " frames differ from runs." + mode + ".frame_sha256 in run.json (first: frame " +
                           std::to_string(first_bad) + ", SHA-256 " + first_got.substr(0, 16) + "..., recorded " +
                           m["frame_sha256"][size_t(first_bad)].get<std::string>().substr(0, 16) + "...)");
  }
  const std::string got = whole.hex();
  if (got != m["rgb24_sha256"].get<std::string>()) {
    throw CorruptDataError("'" + shown_path + "': SHA-256 " + got + ", runs." + mode + ".rgb24_sha256 in run.json is " +
                           m["rgb24_sha256"].get<std::string>());
  }
  return frames;
}

/// A whole file (the MP4) against the SHA-256 run.json records for it.
void verify_whole(const std::string& path, const std::string& shown_path, const std::string& field,
                  const std::string& hash_field, const std::string& want) {
  uintmax_t bytes = 0;
  auto f = open_recorded(path, shown_path, field, &bytes);
  Sha256 h;
  std::vector<unsigned char> buf(kChunk);
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0;) h.update(buf.data(), n);
  if (std::ferror(f.get())) throw CorruptDataError("'" + shown_path + "' (" + field + " in run.json) cannot be read");
  const std::string got = h.hex();
  if (got != want)
    throw CorruptDataError("'" + shown_path + "': SHA-256 " + got + ", " + hash_field + " in run.json is " + want);
}

MissingDataError no_frames(const std::string& run_dir, const std::string& mode) {
  return MissingDataError("'" + manifest_of(run_dir) + "': runs." + mode +
                          ".files.rgb24 is absent: the frame hashes cannot be verified without the frames (e2e run "
                          "--formats rgb24)");
}

}  // namespace

bool is_mode_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxModeName) return false;
  const auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return lower_or_digit(c) || c == '-' || c == '_'; });
}

nlohmann::json read_run_manifest(const std::string& run_dir) {
  const std::string manifest = manifest_of(run_dir);
  std::error_code ec;
  const fs::file_status st = fs::status(manifest, ec);
  if (!fs::exists(st))
    throw UsageError("--run-dir: " + quoted_value(run_dir) + " holds no run.json (a directory written by e2e run)");
  if (!fs::is_regular_file(st)) throw CorruptDataError("'" + manifest + "' is not a regular file");
  const uintmax_t bytes = fs::file_size(manifest, ec);
  if (!ec && bytes > kMaxManifestBytes)
    throw CorruptDataError("'" + manifest + "' holds " + std::to_string(bytes) + " bytes, more than a run.json (" +
                           std::to_string(kMaxManifestBytes) + ")");
  std::ifstream in(manifest, std::ios::binary);
  if (!in) throw UsageError("--run-dir: cannot read '" + manifest + "'");
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw CorruptDataError("'" + manifest + "' is not valid JSON: " + e.what());
  }
  if (!run.is_object()) corrupt(manifest, "the document", "must be a JSON object", &run);
  if (run.value("schema", nlohmann::json()) != kRunSchema)
    corrupt(manifest, "schema", std::string("must be ") + kRunSchema, member(run, "schema"));
  const nlohmann::json* runs = member(run, "runs");
  if (runs == nullptr || !runs->is_object()) corrupt(manifest, "runs", "must be an object of modes", runs);
  for (const auto& [mode, m] : runs->items()) {
    if (!is_mode_name(mode)) {
      const nlohmann::json name = mode;
      corrupt(manifest, "runs", "keys must be mode names ([a-z0-9][a-z0-9_-]*, at most 64 bytes)", &name);
    }
    check_mode(run_dir, manifest, mode, m);
  }
  return run;
}

std::optional<std::string> run_file(const std::string& run_dir, const nlohmann::json& run, const std::string& mode,
                                    const std::string& kind) {
  const nlohmann::json* m = member(run["runs"], mode.c_str());
  const nlohmann::json* files = m ? member(*m, "files") : nullptr;
  const nlohmann::json* path = files ? member(*files, kind.c_str()) : nullptr;
  if (path == nullptr) return std::nullopt;
  const auto inside = path->is_string() ? path_inside(run_dir, path->get<std::string>()) : std::nullopt;
  if (!inside)
    corrupt(manifest_of(run_dir), "runs." + mode + ".files." + kind, "must name a file inside the run directory", path);
  return inside;
}

std::string verify_mode_frames(const std::string& run_dir, const nlohmann::json& run, const std::string& mode) {
  const auto rgb24 = run_file(run_dir, run, mode, "rgb24");
  if (!rgb24) throw no_frames(run_dir, mode);
  const nlohmann::json& m = run["runs"][mode];
  verify_rgb24(*rgb24, (fs::path(run_dir) / m["files"]["rgb24"].get<std::string>()).string(), mode, m);
  return *rgb24;
}

std::string verify_run_files(const std::string& run_dir, const nlohmann::json& run,
                             const std::vector<std::string>& modes) {
  const nlohmann::json& runs = run["runs"];
  for (const std::string& mode : modes)
    if (runs.contains(mode) && !run_file(run_dir, run, mode, "rgb24")) throw no_frames(run_dir, mode);
  int files = 0;
  int64_t frames = 0;
  for (const auto& item : runs.items()) {
    const std::string& mode = item.key();
    const nlohmann::json& m = item.value();  // named, not a structured binding: a lambda captures it below
    const auto shown_path = [&](const char* kind) {
      return (fs::path(run_dir) / m["files"][kind].get<std::string>()).string();
    };
    if (const auto rgb24 = run_file(run_dir, run, mode, "rgb24")) {
      frames += verify_rgb24(*rgb24, shown_path("rgb24"), mode, m);
      ++files;
    }
    const auto mp4 = run_file(run_dir, run, mode, "mp4");
    if (mp4 && m.contains("mp4_sha256")) {
      verify_whole(*mp4, shown_path("mp4"), "runs." + mode + ".files.mp4", "runs." + mode + ".mp4_sha256",
                   m["mp4_sha256"].get<std::string>());
      ++files;
    }
  }
  return std::to_string(files) + " files, " + std::to_string(frames) + " frames re-hashed against run.json";
}

}  // namespace fuseproof::e2e
