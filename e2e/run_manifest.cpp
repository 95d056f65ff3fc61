// run_manifest.cpp: frame descriptions, JSON files and raw RGB24 files of a run directory.
#include "run_manifest.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/sha256.h"

namespace fuseproof::e2e {

std::vector<std::string> frame_sha256(const VideoFrames& frames) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(frames.count));
  for (int f = 0; f < frames.count; ++f) out.push_back(Sha256::of(frames.frame(f), frames.frame_bytes()));
  return out;
}

nlohmann::json describe_frames(const VideoFrames& frames) {
  return {{"frames", frames.count},
          {"width", frames.width},
          {"height", frames.height},
          {"frame_sha256", frame_sha256(frames)},
          {"rgb24_sha256", Sha256::of(frames.rgb.data(), frames.rgb.size())}};
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("'" + path + "' is not valid JSON: " + e.what());
  }
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_file_atomically(path, j.dump(2) + '\n');
}

void write_rgb24(const std::string& path, const VideoFrames& frames) {
  AtomicFile f(path);
  f.write(frames.rgb.data(), frames.rgb.size());
  f.commit();
}

VideoFrames read_rgb24(const std::string& path, int width, int height, int count) {
  VideoFrames v;
  v.width = width;
  v.height = height;
  v.count = count;
  v.rgb.resize(v.frame_bytes() * static_cast<size_t>(count));
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw std::runtime_error("cannot read '" + path + "'");
  const size_t got = std::fread(v.rgb.data(), 1, v.rgb.size(), f.get());
  const bool extra = std::fgetc(f.get()) != EOF;
  if (got != v.rgb.size() || extra) {
    throw std::runtime_error("'" + path + "': size must be " + std::to_string(v.rgb.size()) + " bytes (" +
                             std::to_string(count) + " frames of " + std::to_string(width) + "x" +
                             std::to_string(height) + " rgb24), got " + (extra ? "more" : std::to_string(got)));
  }
  return v;
}

}  // namespace fuseproof::e2e
