// fuzz_read_video.cpp: `video compare`'s loading path (e2e/video_reader.h) on mutated Y4M and MP4 files: every input
// is decoded or refused with a VideoError (one line, naming the file), never a crash; a decoded clip is then compared
// with itself and reported, as `video compare` does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_input.h"
#include "video_compare.h"
#include "video_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuseproof::fuzz::MemoryFile file(data, size);
  using namespace fuseproof::e2e;
  try {
    const DecodedVideo v = read_video(file.path());
    if (v.frames.count < 1 || v.frames.width < 1 || v.frames.height < 1) __builtin_trap();  // must have thrown
    if (v.frames.rgb.size() != v.frames.frame_bytes() * size_t(v.frames.count)) __builtin_trap();
    // The metrics cost time per pixel; keep the comparison to clips a fuzzer can afford.
    if (v.frames.rgb.size() <= (size_t(1) << 20)) {
      const VideoComparison c = compare_videos(v, v, file.path(), file.path());
      if (!c.frames_identical) __builtin_trap();  // a clip differs from itself
      (void)to_json(c);
      (void)to_markdown(c);
    }
  } catch (const VideoError& e) {
    const std::string m = e.what();
    if (m.empty() || m.find('\n') != std::string::npos) __builtin_trap();  // one line
  }
  return 0;
}
