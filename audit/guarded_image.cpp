// guarded_image.cpp: allocation, filling and guard counting of a guarded host image, on every core for large images.
#include "audit/guarded_image.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "common/parallel_for.h"

namespace fuseproof::audit {

namespace {

/// Bytes below which an image's fill, copy or comparison stays on one thread (about 0.1 ms of memory traffic).
constexpr size_t kGrainBytes = size_t(1) << 20;

/// fn(lo, hi) over byte ranges of [0, bytes), even-aligned, on every core above kGrainBytes.
template <class Fn>
void byte_ranges(size_t bytes, Fn&& fn) {
  const size_t words = (bytes + 1) / 2;
  parallel_for(words, [&](unsigned, size_t lo, size_t hi) { fn(lo * 2, std::min(bytes, hi * 2)); }, kGrainBytes / 2);
}

/// Freed images kept for the next image of the same size. A class that calls the subject on blocks of one shape (the
/// domain's 32 MB grids, 256 of them) would otherwise map fresh memory for every call, which the kernel zeroes page
/// by page: on a 2-core VM half of the images' time. Every byte of a reused image is written again (fill or data).
class ImageCache {
 public:
  uint8_t* take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < kept_.size(); ++i)
        if (kept_[i].first == bytes) {
          uint8_t* p = kept_[i].second;
          held_ -= bytes;
          kept_.erase(kept_.begin() + long(i));
          return p;
        }
    }
    return static_cast<uint8_t*>(std::aligned_alloc(256, bytes));
  }
  void give(uint8_t* p, size_t bytes) {
    if (!p) return;
    if (bytes >= kMinBytes) {
      std::lock_guard<std::mutex> lock(mu_);
      if (kept_.size() < kMaxKept && held_ + bytes <= kMaxHeld) {
        kept_.emplace_back(bytes, p);
        held_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  static constexpr size_t kMinBytes = size_t(1) << 20;   // small images come from malloc's own free lists
  static constexpr size_t kMaxHeld = size_t(512) << 20;  // what the cache may hold at once
  static constexpr size_t kMaxKept = 8;
  std::mutex mu_;
  std::vector<std::pair<size_t, uint8_t*>> kept_;
  size_t held_ = 0;
};

/// Never destroyed: an image destroyed during static destruction still finds it.
ImageCache& image_cache() {
  static ImageCache* cache = new ImageCache;
  return *cache;
}

}  // namespace

void GuardedImage::Free::operator()(uint8_t* p) const { image_cache().give(p, bytes); }

GuardedImage::GuardedImage(size_t elems, uint16_t fill, uint32_t misalign)
    : GuardedImage(nullptr, elems, fill, misalign) {}

GuardedImage::GuardedImage(const uint16_t* data, size_t elems, uint16_t fill, uint32_t misalign)
    : elems_(elems), fill_(fill), misalign_(misalign) {
  size_ = ((2 * kGuardElems + elems) * 2 + misalign + 255) / 256 * 256;
  base_ = std::unique_ptr<uint8_t, Free>(image_cache().take(size_), Free{size_});
  if (!base_) throw std::bad_alloc();
  // The fill pattern as little-endian uint16 words (the image is 256-byte aligned, its size even); where data is
  // copied in, only the guards around it.
  uint16_t* words = reinterpret_cast<uint16_t*>(base_.get());
  const auto fill_words = [&](size_t lo, size_t hi) {
    byte_ranges(hi - lo, [&](size_t a, size_t b) { std::fill(words + (lo + a) / 2, words + (lo + b) / 2, fill); });
  };
  if (!data || !elems) {
    fill_words(0, size_);
    return;
  }
  fill_words(0, data_offset() & ~size_t(1));
  fill_words((data_offset() + elems * 2 + 1) & ~size_t(1), size_);
  if (misalign_ & 1) {  // an odd misalignment leaves the byte before the data (even: low) and after it (odd: high)
    base_.get()[data_offset() - 1] = uint8_t(fill & 0xFF);
    base_.get()[data_offset() + elems * 2] = uint8_t(fill >> 8);
  }
  copy_bytes(this->data(), data, elems * 2);
}

const uint16_t* GuardedImage::elems() const {
  return reinterpret_cast<const uint16_t*>(bytes() + data_offset());
}

uint64_t GuardedImage::guard_writes() const {
  const uint8_t* p = bytes();
  const size_t lo = data_offset(), hi = lo + elems_ * 2;
  const uint8_t f[2] = {uint8_t(fill_ & 0xFF), uint8_t(fill_ >> 8)};
  uint64_t n = 0;
  for (size_t i = 0; i < lo; ++i) n += p[i] != f[i & 1];
  for (size_t i = hi; i < size_; ++i) n += p[i] != f[i & 1];
  return n;
}

std::vector<uint8_t> GuardedImage::snapshot() const {
  std::vector<uint8_t> snap(size_);
  copy_bytes(snap.data(), bytes(), size_);
  return snap;
}

bool GuardedImage::equals(const std::vector<uint8_t>& snap) const {
  return snap.size() == size_ && same_bytes(snap.data(), bytes(), size_);
}

void copy_bytes(void* dst, const void* src, size_t bytes) {
  byte_ranges(bytes, [&](size_t lo, size_t hi) {
    std::memcpy(static_cast<uint8_t*>(dst) + lo, static_cast<const uint8_t*>(src) + lo, hi - lo);
  });
}

bool same_bytes(const void* a, const void* b, size_t bytes) {
  std::atomic<bool> same{true};
  byte_ranges(bytes, [&](size_t lo, size_t hi) {
    if (std::memcmp(static_cast<const uint8_t*>(a) + lo, static_cast<const uint8_t*>(b) + lo, hi - lo) != 0)
      same = false;
  });
  return same;
}

}  // namespace fuseproof::audit
