// guarded_image.cpp: allocation, filling and guard counting of a guarded host image.
#include "audit/guarded_image.h"

#include <cstring>
#include <new>

namespace fuseproof::audit {

GuardedImage::GuardedImage(size_t elems, uint16_t fill, uint32_t misalign)
    : elems_(elems), fill_(fill), misalign_(misalign) {
  size_ = ((2 * kGuardElems + elems) * 2 + misalign + 255) / 256 * 256;
  base_.reset(static_cast<uint8_t*>(std::aligned_alloc(256, size_)));
  if (!base_) throw std::bad_alloc();
  uint8_t* p = base_.get();
  for (size_t i = 0; i < size_; i += 2) {
    p[i] = uint8_t(fill & 0xFF);
    p[i + 1] = uint8_t(fill >> 8);
  }
}

GuardedImage::GuardedImage(const uint16_t* data, size_t elems, uint16_t fill, uint32_t misalign)
    : GuardedImage(elems, fill, misalign) {
  if (elems) std::memcpy(this->data(), data, elems * 2);
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

bool GuardedImage::equals(const std::vector<uint8_t>& snap) const {
  return snap.size() == size_ && std::memcmp(snap.data(), bytes(), size_) == 0;
}

}  // namespace fuseproof::audit
