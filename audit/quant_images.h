// quant_images.h: the guarded images of one quantization call (its input buffers, the codes and scales poisoned) and
// their checks after the call, shared by every QuantRunner; the heartbeat of calls that overlap.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "audit/guarded_image.h"
#include "audit/quant_runner.h"

namespace fuseproof::audit {

/// One call's images: each input buffer with its guard fill (input_guard_fill(k)), the codes and scales poisoned with
/// kPoison over their data and guards, and the inputs' bytes before the call.
struct QuantImages {
  explicit QuantImages(const QuantCallSpec& spec);
  std::vector<GuardedImage> buffers;
  GuardedImage codes, scales;
  std::vector<std::vector<uint8_t>> before;
  /// Where each buffer's data starts in this host memory (what abi_quant_call offsets for its probes).
  std::vector<uint8_t*> buffer_data();
  /// Reads codes and scales back into o (every byte, padding cells included), counts their guard bytes no longer
  /// poison (the byte after an odd-sized tensor included) and compares every input image with its bytes before.
  void finish(const QuantCallSpec& spec, QuantOutcome& o) const;
};

/// The images of each call of `specs`, in order.
std::vector<QuantImages> quant_images_of(const std::vector<QuantCallSpec>& specs);

/// Guard bytes of `img` around its first `data_bytes` bytes of data that are no longer its fill pattern.
uint64_t guard_bytes_changed(const GuardedImage& img, size_t data_bytes);

/// The heartbeat (call_watch.h) of calls that overlap: a "B" line as each call starts, and "E" only when none is left
/// running; when the last call to start ends before another, the oldest one still running is named again, so that a
/// hang is reported with a call that hangs.
class OverlappedWatch {
 public:
  OverlappedWatch() = default;
  OverlappedWatch(const OverlappedWatch&) = delete;
  OverlappedWatch& operator=(const OverlappedWatch&) = delete;
  /// Calls still running when the batch gave up (a backend failure): the watch ends with it.
  ~OverlappedWatch();
  void begin(size_t id, const std::string& call);
  void end(size_t id);

 private:
  std::mutex mu_;
  std::map<size_t, std::string> running_;
  size_t last_named_ = 0;
};

}  // namespace fuseproof::audit
