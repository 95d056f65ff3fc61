// host_runner.cpp: KernelRunner for host-memory plugins.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "audit/kernel_runner.h"

namespace fuseproof::audit {

namespace {

/// An aligned allocation of guard + n + guard elements plus slack for misalignment.
struct GuardedBuffer {
  explicit GuardedBuffer(size_t n, uint16_t fill) : elems(n) {
    bytes = (2 * kGuardElems + n) * 2 + 256;
    base = static_cast<uint8_t*>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
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
    o.rc = plugin_.call(out, x, bias, s.rows, s.width, s.dtype, nullptr, &o.message);
    o.out.resize(s.out_elems);
    std::memcpy(o.out.data(), ob.data(s.out_misalign), s.out_elems * 2);
    // Every byte outside [data, data + out_elems) must still be poison.
    const uint8_t* lo = ob.data(s.out_misalign);
    const uint8_t* hi = lo + s.out_elems * 2;
    const uint8_t poison_lo = uint8_t(kPoison & 0xFF), poison_hi = uint8_t(kPoison >> 8);
    for (const uint8_t* p = ob.base; p < ob.base + ob.bytes; ++p) {
      if (p >= lo && p < hi) continue;
      const size_t i = size_t(p - ob.base);
      if (*p != ((i & 1) ? poison_hi : poison_lo)) ++o.guard_writes;
    }
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
    d.rc = plugin_.call(out.data(), x.data(), biases.data(), 65536, int64_t(n), dtype, nullptr, &d.message);
    d.out_canonical.resize(out.size());
    for (size_t r = 0; r < 65536; ++r)
      for (size_t c = 0; c < n; ++c) d.out_canonical[c * 65536 + r] = out[r * n + c];
    return d;
  }

  std::optional<CallOutcome> call_after_producer(const CallSpec&, const std::vector<uint16_t>&,
                                                 const std::vector<uint16_t>&, int) override {
    return std::nullopt;
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
