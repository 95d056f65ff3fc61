// guarded_image_test.cpp: tests audit/guarded_image.h: every byte outside the data holds the fill pattern (images
// small and large enough to be filled on several threads, every misalignment), data copied in exactly, guard writes
// and changed bytes counted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "audit/call_spec.h"
#include "audit/guarded_image.h"
#include "audit/kernel_runner.h"
#include "kernels/fuseproof_kernel_abi.h"
#include "reference/op_spec.h"

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

// CallImages without host snapshots of its large inputs (the CUDA runner checks those on the device): finish takes
// the runner's word for them, counts a changed one as modified, and refuses an input nobody checked; the small input
// of the same call is still compared with its snapshot.
TEST(Audit_CallImages_both, InputsWithoutSnapshotsTakeTheRunnersVerdict) {
  // bias_gelu_tanh: x [rows, width] (large), bias [width] (small).
  const CallSpec s = make_call(*ref::find_op("bias_gelu_tanh"), 1024, 1024, FUSEPROOF_DTYPE_BF16);
  const size_t from = size_t(1) << 20;
  const auto fresh = [&] {
    CallImages im(s, from);
    EXPECT_TRUE(im.before[0].empty()) << "x (2 MiB) has a snapshot";
    EXPECT_FALSE(im.before[1].empty()) << "bias (2 KiB) has no snapshot";
    return im;
  };
  {
    CallImages im = fresh();
    CallOutcome o;
    EXPECT_THROW(im.finish(s, o), std::logic_error);  // the runner said nothing of x
  }
  {
    CallImages im = fresh();
    im.changed_on_device[0] = 0;
    CallOutcome o;
    im.finish(s, o);
    EXPECT_TRUE(o.inputs_intact);
    EXPECT_EQ(o.modified, "");
  }
  {
    CallImages im = fresh();
    im.changed_on_device[0] = 1;
    CallOutcome o;
    im.finish(s, o);
    EXPECT_FALSE(o.inputs_intact);
    EXPECT_EQ(o.modified, s.buffer_names[0]);
  }
  {  // negative control of the snapshot path beside it: a changed bias byte is still seen
    CallImages im = fresh();
    im.changed_on_device[0] = 0;
    im.buffers[1].data()[3] ^= 0x40;
    CallOutcome o;
    im.finish(s, o);
    EXPECT_FALSE(o.inputs_intact);
    EXPECT_EQ(o.modified, s.buffer_names[1]);
  }
  {  // the default: every input snapshotted, so a changed x byte is found on the host
    CallImages im(s);
    EXPECT_FALSE(im.before[0].empty());
    im.buffers[0].data()[5] ^= 1;
    CallOutcome o;
    im.finish(s, o);
    EXPECT_FALSE(o.inputs_intact);
    EXPECT_EQ(o.modified, s.buffer_names[0]);
  }
}

}  // namespace
}  // namespace fuseproof::audit
