// quant_images.cpp: a quantization call's guarded images and their checks; the heartbeat of overlapping calls.
#include "audit/quant_images.h"

#include "audit/call_watch.h"

namespace fuseproof::audit {

namespace {

/// 16-bit elements that hold `bytes` (a tensor of an odd number of bytes gets one pad byte, counted as guard).
size_t elems_for(size_t bytes) { return (bytes + 1) / 2; }

}  // namespace

QuantImages::QuantImages(const QuantCallSpec& s)
    : codes(elems_for(s.codes_bytes), kPoison, s.codes_misalign),
      scales(elems_for(s.scale_bytes), kPoison, s.scales_misalign) {
  buffers.reserve(s.buffers.size());
  for (size_t k = 0; k < s.buffers.size(); ++k) {
    buffers.emplace_back(s.buffers[k].data(), s.buffers[k].size(), input_guard_fill(int(k)));
    before.push_back(buffers.back().snapshot());
  }
}

std::vector<uint8_t*> QuantImages::buffer_data() {
  std::vector<uint8_t*> v;
  for (auto& b : buffers) v.push_back(b.data());
  return v;
}

uint64_t guard_bytes_changed(const GuardedImage& img, size_t data_bytes) {
  uint64_t n = img.guard_writes();
  const uint8_t* p = img.bytes();
  const uint8_t f[2] = {uint8_t(img.fill() & 0xFF), uint8_t(img.fill() >> 8)};
  // The pad byte of an odd-sized tensor lies inside the image's data: a write there is out of bounds too.
  for (size_t i = img.data_offset() + data_bytes; i < img.data_offset() + img.elem_count() * 2; ++i)
    n += p[i] != f[i & 1];
  return n;
}

void QuantImages::finish(const QuantCallSpec& s, QuantOutcome& o) const {
  const uint8_t* c = codes.bytes() + codes.data_offset();
  const uint8_t* sc = scales.bytes() + scales.data_offset();
  o.codes.assign(c, c + s.codes_bytes);
  o.scales.assign(sc, sc + s.scale_bytes);
  o.guard_writes = guard_bytes_changed(codes, s.codes_bytes) + guard_bytes_changed(scales, s.scale_bytes);
  o.inputs_intact = true;
  o.modified.clear();
  for (size_t k = 0; k < buffers.size(); ++k) {
    if (buffers[k].equals(before[k])) continue;
    o.inputs_intact = false;
    o.modified += (o.modified.empty() ? "" : ", ") +
                  (k < s.buffer_names.size() ? s.buffer_names[k] : "buffer " + std::to_string(k));
  }
}

std::vector<QuantImages> quant_images_of(const std::vector<QuantCallSpec>& specs) {
  std::vector<QuantImages> images;
  images.reserve(specs.size());  // the calls' pointers point into the images: they must not move
  for (const auto& s : specs) images.emplace_back(s);
  return images;
}

OverlappedWatch::~OverlappedWatch() {
  if (!running_.empty()) watch_end();
}

void OverlappedWatch::begin(size_t id, const std::string& call) {
  std::lock_guard<std::mutex> lock(mu_);
  running_[id] = call;
  last_named_ = id;
  watch_begin(call);
}

void OverlappedWatch::end(size_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(id);
  if (running_.empty()) {
    watch_end();
  } else if (last_named_ == id) {
    last_named_ = running_.begin()->first;
    watch_begin(running_.begin()->second);
  }
}

}  // namespace fuseproof::audit
