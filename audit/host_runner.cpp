// host_runner.cpp: KernelRunner for host-memory plugins.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <fstream>
#include <thread>

#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
#include "audit/kernel_runner.h"

namespace fuseproof::audit {

namespace {

/// An aligned allocation of guard + n + guard elements plus slack for misalignment.
struct GuardedBuffer {
  explicit GuardedBuffer(size_t n, uint16_t fill) : elems(n) {
    bytes = (2 * kGuardElems + n) * 2 + 256;
    base = static_cast<uint8_t*>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
    if (!base) throw std::bad_alloc();
    uint16_t* p = reinterpret_cast<uint16_t*>(base);
    for (size_t i = 0; i < bytes / 2; ++i) p[i] = fill;
  }
  ~GuardedBuffer() { std::free(base); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  /// Start of the data (aligned to 256 bytes before `misalign`).
  uint8_t* data(uint32_t misalign) const { return base + kGuardElems * 2 + misalign; }
  uint8_t* base;
  size_t bytes;
  size_t elems;
};

/// Bytes of `ob` outside [data(misalign), +elems) that are no longer poison.
uint64_t guard_writes(const GuardedBuffer& ob, uint32_t misalign, size_t elems) {
  const uint8_t* lo = ob.data(misalign);
  const uint8_t* hi = lo + elems * 2;
  const uint8_t poison_lo = uint8_t(kPoison & 0xFF), poison_hi = uint8_t(kPoison >> 8);
  uint64_t n = 0;
  for (const uint8_t* p = ob.base; p < lo; ++p) n += *p != ((size_t(p - ob.base) & 1) ? poison_hi : poison_lo);
  for (const uint8_t* p = hi; p < ob.base + ob.bytes; ++p) n += *p != ((size_t(p - ob.base) & 1) ? poison_hi : poison_lo);
  return n;
}

class HostRunner final : public KernelRunner {
 public:
  explicit HostRunner(const Plugin& plugin) : plugin_(plugin) {}

  CallOutcome call(const CallSpec& s) override {
    CallOutcome o;
    GuardedBuffer xb(s.x.size(), kPoison ^ 0x1111), bb(s.bias.size(), kPoison ^ 0x2222), ob(s.out_elems, kPoison);
    std::memcpy(xb.data(s.x_misalign), s.x.data(), s.x.size() * 2);
    std::memcpy(bb.data(s.bias_misalign), s.bias.data(), s.bias.size() * 2);
    std::vector<uint8_t> x_before(xb.base, xb.base + xb.bytes), b_before(bb.base, bb.base + bb.bytes);
    void* out = s.null_out ? nullptr : ob.data(s.out_misalign);
    const void* x = s.null_x ? nullptr : xb.data(s.x_misalign);
    const void* bias = s.null_bias ? nullptr : bb.data(s.bias_misalign);
    watch_begin(describe_call(s));
    o.rc = plugin_.call(out, x, bias, s.rows, s.width, s.dtype, nullptr, &o.message);
    watch_end();
    o.out.resize(s.out_elems);
    std::memcpy(o.out.data(), ob.data(s.out_misalign), s.out_elems * 2);
    o.guard_writes = guard_writes(ob, s.out_misalign, s.out_elems);
    o.inputs_intact = std::memcmp(x_before.data(), xb.base, xb.bytes) == 0 &&
                      std::memcmp(b_before.data(), bb.base, bb.bytes) == 0;
    return o;
  }

  DomainBlock domain_block(int32_t dtype, const std::vector<uint16_t>& biases) override {
    DomainBlock d;
    const size_t n = biases.size();
    std::vector<uint16_t> x(size_t(65536) * n), out(size_t(65536) * n, kPoison);
    for (size_t r = 0; r < 65536; ++r)
      for (size_t c = 0; c < n; ++c) x[r * n + c] = uint16_t(r);
    watch_begin("rows=65536,width=" + std::to_string(n) + ",dtype=" + std::to_string(dtype) + ",x+0,bias+0,out+0");
    d.rc = plugin_.call(out.data(), x.data(), biases.data(), 65536, int64_t(n), dtype, nullptr, &d.message);
    watch_end();
    d.out_canonical.resize(out.size());
    for (size_t r = 0; r < 65536; ++r)
      for (size_t c = 0; c < n; ++c) d.out_canonical[c * 65536 + r] = out[r * n + c];
    return d;
  }

  std::optional<CallOutcome> call_after_producer(const CallSpec&, const std::vector<uint16_t>&,
                                                 const std::vector<uint16_t>&, int) override {
    return std::nullopt;
  }

  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& check) override {
    LargeOutcome o;
    const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
    const size_t n = size_t(s.rows) * size_t(s.width);
    GuardedBuffer xb(n, kPoison ^ 0x1111), bb(size_t(s.width), kPoison ^ 0x2222), ob(n, kPoison);
    uint16_t* x = reinterpret_cast<uint16_t*>(xb.data(0));
    uint16_t* b = reinterpret_cast<uint16_t*>(bb.data(0));
    for (size_t i = 0; i < n; ++i) x[i] = counter_pattern(bf16, s.seed, i);
    for (size_t c = 0; c < size_t(s.width); ++c) b[c] = counter_pattern(bf16, s.seed ^ kBiasSalt, c);
    watch_begin("rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + ",dtype=" +
                std::to_string(s.dtype) + ",x+0,bias+0,out+0");
    o.rc = plugin_.call(ob.data(0), x, b, s.rows, s.width, s.dtype, nullptr, &o.message);
    watch_end();
    o.guard_writes = guard_writes(ob, 0, n);
    // Inputs: regenerate rather than keep a copy.
    for (size_t i = 0; i < n; ++i) o.inputs_changed += x[i] != counter_pattern(bf16, s.seed, i);
    for (size_t c = 0; c < size_t(s.width); ++c) o.inputs_changed += b[c] != counter_pattern(bf16, s.seed ^ kBiasSalt, c);
    if (o.rc != 0) return o;
    const uint16_t* out = reinterpret_cast<const uint16_t*>(ob.data(0));
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / s.width);
    for (int64_t r0 = 0; r0 < s.rows; r0 += chunk)
      if (!check(r0, std::min(chunk, s.rows - r0), out + size_t(r0) * size_t(s.width))) break;
    return o;
  }

  uint64_t memory_available() const override {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
  }

  std::string hardware() const override { return host_cpu_description(); }

 private:
  const Plugin& plugin_;
};

}  // namespace

std::unique_ptr<KernelRunner> make_host_runner(const Plugin& plugin) { return std::make_unique<HostRunner>(plugin); }

std::string host_cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs)";
}

}  // namespace fuseproof::audit
