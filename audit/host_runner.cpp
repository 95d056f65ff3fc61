// host_runner.cpp: KernelRunner for host-memory plugins: the plugin works on the guarded images themselves.
#include <unistd.h>

#include <algorithm>

#include "audit/call_watch.h"
#include "audit/host_lanes.h"
#include "audit/kernel_runner.h"
#include "common/parallel_for.h"
#include "common/phase_clock.h"

namespace fuseproof::audit {

namespace {

class HostRunner final : public ImageRunner {
 public:
  explicit HostRunner(const Plugin& plugin) : plugin_(plugin) {}

  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& check) override {
    LargeOutcome o;
    const size_t n = size_t(s.rows) * size_t(s.width);
    std::vector<GuardedImage> bufs;
    std::vector<uint16_t*> data;
    for (int k = 0; k < int(s.op->buffers().size()); ++k) {
      bufs.emplace_back(s.buffer_elems(k), input_guard_fill(k));
      data.push_back(reinterpret_cast<uint16_t*>(bufs.back().data()));
    }
    fill_counter_buffers(s, data);
    GuardedImage out(n, kPoison);
    const CallSpec view = s.view();
    std::vector<uint8_t*> ptrs;
    for (auto& b : bufs) ptrs.push_back(b.data());
    const fuseproof_call_t c = abi_call(view, ptrs, out.data(), nullptr);
    {
      const PhaseClock kernel("kernel");
      watch_begin(describe_call(view));
      o.rc = plugin_.call(c, &o.message);
      watch_end();
    }
    o.guard_writes = out.guard_writes();
    // Inputs: regenerated rather than kept twice; every guard must keep its fill.
    std::vector<const uint16_t*> cdata(data.begin(), data.end());
    o.inputs_changed = count_counter_changes(s, cdata);
    for (const auto& b : bufs) o.inputs_changed += (b.guard_writes() + 1) / 2;
    if (o.rc != 0) return o;
    const uint16_t* result = out.elems();
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / s.width);
    for (int64_t r0 = 0; r0 < s.rows; r0 += chunk)
      if (!check(r0, std::min(chunk, s.rows - r0), result + size_t(r0) * size_t(s.width))) break;
    return o;
  }

  uint64_t memory_available() const override { return host_memory_available(); }

  std::string hardware() const override { return host_cpu_description(); }

  /// One thread per lane, released together; each makes its calls one after another on images of its own.
  std::optional<ConcurrentOutcome> call_concurrent(const std::vector<CallSpec>& specs, int lanes) override {
    std::vector<CallImages> images = images_of(specs);
    return run_host_concurrent<ConcurrentOutcome>(specs, lanes, images, [&](size_t i, std::string* message) {
      return plugin_.call(abi_call(specs[i], images[i].buffer_data(), images[i].out.aligned_data(), nullptr), message);
    });
  }

 private:
  std::string run(const CallSpec& s, CallImages& im, CallOutcome* o) override {
    const fuseproof_call_t c = abi_call(s, im.buffer_data(), im.out.aligned_data(), nullptr);
    const PhaseClock kernel("kernel");
    watch_begin(describe_call(s));
    o->rc = plugin_.call(c, &o->message);
    watch_end();
    return "";
  }

  const Plugin& plugin_;
};

}  // namespace

std::unique_ptr<KernelRunner> make_host_runner(const Plugin& plugin) { return std::make_unique<HostRunner>(plugin); }

}  // namespace fuseproof::audit
