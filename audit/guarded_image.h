// guarded_image.h: the one guarded buffer of every runner: a host image of guard + data + guard, the guards filled
// with a pattern no correct kernel writes, and the count of guard bytes a call changed. Large images are filled,
// copied and compared on every core (common/parallel_for.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace fuseproof::audit {

/// Written over out and its guards before each call; a NaN pattern no correct kernel writes (NaN is 0x7FFF).
inline constexpr uint16_t kPoison = 0xFFA5;
/// Guard elements on each side of every buffer; writes there are out-of-bounds writes.
inline constexpr size_t kGuardElems = 256;
/// Guard fill of input buffer k (out: kPoison): each buffer its own, so a write from one into another is seen.
constexpr uint16_t input_guard_fill(int k) { return uint16_t(kPoison ^ (0x1111u * uint16_t(k + 1))); }

/// [kGuardElems of fill | misalign bytes | data | fill to the end]: 256-byte aligned, so the data starts at a
/// 256-byte boundary plus `misalign` bytes, as a device allocation of the same bytes does.
class GuardedImage {
 public:
  /// Every byte the fill pattern (the data too: out is poisoned).
  GuardedImage(size_t elems, uint16_t fill, uint32_t misalign = 0);
  /// The data copied in, the rest the fill pattern.
  GuardedImage(const uint16_t* data, size_t elems, uint16_t fill, uint32_t misalign = 0);

  uint8_t* bytes() { return base_.get(); }
  const uint8_t* bytes() const { return base_.get(); }
  size_t size_bytes() const { return size_; }
  /// Offset of the data from the image's start, in bytes (kGuardElems * 2 + misalign).
  size_t data_offset() const { return kGuardElems * 2 + misalign_; }
  uint8_t* data() { return bytes() + data_offset(); }
  /// The data's 256-byte aligned start before `misalign` (the pointer a probe offsets).
  uint8_t* aligned_data() { return bytes() + kGuardElems * 2; }
  const uint16_t* elems() const;  ///< the data as uint16 (misalign even)
  size_t elem_count() const { return elems_; }
  uint16_t fill() const { return fill_; }

  /// Bytes outside the data that are no longer the fill pattern.
  uint64_t guard_writes() const;
  /// A copy of every byte (to compare an input image before and after a call).
  std::vector<uint8_t> snapshot() const;
  bool equals(const std::vector<uint8_t>& snap) const;

 private:
  /// Hands the allocation back to the image cache (guarded_image.cpp), which keeps a few for images of the same size.
  struct Free {
    size_t bytes;  // set with the pointer (a null pointer is never freed)
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> base_;
  size_t size_ = 0, elems_ = 0;
  uint16_t fill_ = 0;
  uint32_t misalign_ = 0;
};

/// memcpy and memcmp == 0 of large host buffers (an image, its snapshot, a call's output), on every core above 1 MiB.
void copy_bytes(void* dst, const void* src, size_t bytes);
bool same_bytes(const void* a, const void* b, size_t bytes);

}  // namespace fuseproof::audit
