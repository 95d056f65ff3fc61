// guarded_image_test.cpp: tests audit/guarded_image.h: every byte outside the data holds the fill pattern (images
// small and large enough to be filled on several threads, every misalignment), data copied in exactly, guard writes
// and changed bytes counted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "audit/guarded_image.h"

namespace fuseproof::audit {
namespace {

/// The fill byte at image offset i: the pattern as little-endian uint16 words from the image's start.
uint8_t fill_byte(uint16_t fill, size_t i) { return i % 2 == 0 ? uint8_t(fill & 0xFF) : uint8_t(fill >> 8); }

TEST(Audit_GuardedImage_both, GuardsHoldTheFillAndTheDataIsCopied) {
  ::setenv("FUSEPROOF_THREADS", "3", 1);  // the large images on several workers
  for (const size_t elems : {size_t(0), size_t(5), size_t(1) << 21})
    for (const uint32_t misalign : {0u, 1u, 2u, 3u}) {
      std::vector<uint16_t> data(elems);
      for (size_t i = 0; i < elems; ++i) data[i] = uint16_t(i * 2654435761u >> 7);
      const uint16_t fill = input_guard_fill(1);
      const GuardedImage img(data.data(), elems, fill, misalign);
      const GuardedImage poisoned(elems, kPoison, misalign);
      const uint8_t* b = img.bytes();
      const size_t lo = img.data_offset(), hi = lo + elems * 2;
      size_t wrong = 0;
      for (size_t i = 0; i < img.size_bytes(); ++i)
        if (i < lo || i >= hi) wrong += b[i] != fill_byte(fill, i);
      EXPECT_EQ(wrong, 0u) << elems << " elements, misalign " << misalign;
      if (elems) EXPECT_EQ(std::memcmp(img.bytes() + lo, data.data(), elems * 2), 0) << elems << ", " << misalign;
      EXPECT_EQ(img.guard_writes(), 0u);
      size_t not_poison = 0;
      for (size_t i = 0; i < poisoned.size_bytes(); ++i) not_poison += poisoned.bytes()[i] != fill_byte(kPoison, i);
      EXPECT_EQ(not_poison, 0u) << elems << " elements, misalign " << misalign;
    }
  ::unsetenv("FUSEPROOF_THREADS");
}

// Negative controls: a byte changed in a guard is counted, and a snapshot sees a changed data byte.
TEST(Audit_GuardedImage_both, GuardWritesAndChangesAreSeen) {
  GuardedImage img(size_t(1) << 21, kPoison, 2);
  const std::vector<uint8_t> before = img.snapshot();
  EXPECT_TRUE(img.equals(before));
  img.data()[12345] ^= 1;
  EXPECT_FALSE(img.equals(before));
  img.bytes()[img.size_bytes() - 1] ^= 0xFF;
  img.bytes()[3] ^= 0x10;
  EXPECT_EQ(img.guard_writes(), 2u);
  EXPECT_FALSE(same_bytes(before.data(), img.bytes(), before.size()));
  std::vector<uint8_t> copy(before.size());
  copy_bytes(copy.data(), img.bytes(), copy.size());
  EXPECT_TRUE(same_bytes(copy.data(), img.bytes(), copy.size()));
}

}  // namespace
}  // namespace fuseproof::audit
