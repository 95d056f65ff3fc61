// quant_host_runner.cpp: QuantRunner for host-memory plugins: each call on guarded images of its own, the calls of a
// batch spread over every core.
#include <unistd.h>

#include <algorithm>

#include "audit/call_watch.h"
#include "audit/host_lanes.h"
#include "audit/quant_images.h"
#include "audit/quant_runner.h"
#include "common/parallel_for.h"
#include "common/phase_clock.h"

namespace fuseproof::audit {

namespace {

class HostQuantRunner final : public QuantRunner {
 public:
  explicit HostQuantRunner(const Plugin& plugin) : plugin_(plugin) {}

  /// Each call makes its images, calls the plugin on them and checks them on a worker of its own: a batch holds no
  /// more than a worker's images at once, and slow calls balance themselves over the workers.
  std::vector<QuantOutcome> call_batch(const std::vector<QuantCallSpec>& specs) override {
    std::vector<QuantOutcome> out(specs.size());
    OverlappedWatch watch;
    const PhaseClock clock("kernel and guarded images (every core)");
    parallel_items(specs.size(), [&](unsigned, size_t i) {
      const QuantCallSpec& s = specs[i];
      QuantImages im(s);
      const fuseproof_call_t c =
          abi_quant_call(s, im.buffer_data(), im.codes.aligned_data(), im.scales.aligned_data(), nullptr);
      watch.begin(i, describe_quant_call(s));
      out[i].rc = plugin_.call(c, &out[i].message);
      watch.end(i);
      im.finish(s, out[i]);
    });
    return out;
  }

  std::string hardware() const override { return host_cpu_description(); }
  int preferred_batch() const override { return int(4 * worker_count()); }

  uint64_t memory_available() const override { return host_memory_available(); }

  /// The buffers generated in place, codes and scales poisoned; the plugin's call on them, then the inputs
  /// regenerated and compared, and the codes and scales handed to `check` in chunks of about 2^24 elements.
  std::optional<QuantLargeOutcome> large_call(const QuantLargeSpec& s, const QuantChunkCheck& check) override {
    QuantLargeOutcome o;
    const QuantCallSpec& v = s.view;
    std::vector<GuardedImage> bufs;
    for (size_t k = 0; k < s.buffer_elems.size(); ++k) {
      bufs.emplace_back(s.buffer_elems[k], input_guard_fill(int(k)));
      s.fill(int(k), reinterpret_cast<uint16_t*>(bufs.back().data()));
    }
    GuardedImage codes((v.codes_bytes + 1) / 2, kPoison), scales((v.scale_bytes + 1) / 2, kPoison);
    std::vector<uint8_t*> ptrs;
    for (auto& b : bufs) ptrs.push_back(b.data());
    const fuseproof_call_t c = abi_quant_call(v, ptrs, codes.aligned_data(), scales.aligned_data(), nullptr);
    {
      const PhaseClock kernel("kernel");
      watch_begin(describe_quant_call(v));
      o.rc = plugin_.call(c, &o.message);
      watch_end();
    }
    o.guard_writes = guard_bytes_changed(codes, v.codes_bytes) + guard_bytes_changed(scales, v.scale_bytes);
    for (size_t k = 0; k < bufs.size(); ++k)
      o.inputs_changed += s.changed(int(k), reinterpret_cast<const uint16_t*>(bufs[k].data())) +
                          (bufs[k].guard_writes() + 1) / 2;
    if (o.rc != 0) return o;
    const size_t row_codes = v.codes_bytes / size_t(v.rows), row_scales = v.scale_bytes / size_t(v.rows);
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / v.width);
    for (int64_t r0 = 0; r0 < v.rows; r0 += chunk)
      if (!check(r0, std::min(chunk, v.rows - r0), codes.data() + size_t(r0) * row_codes,
                 scales.data() + size_t(r0) * row_scales))
        break;
    return o;
  }

  /// One thread per lane, released together; each makes its calls one after another on images of its own.
  std::optional<QuantConcurrentOutcome> call_concurrent(const std::vector<QuantCallSpec>& specs, int lanes) override {
    std::vector<QuantImages> images = quant_images_of(specs);
    return run_host_concurrent<QuantConcurrentOutcome>(specs, lanes, images, [&](size_t i, std::string* message) {
      const fuseproof_call_t c = abi_quant_call(specs[i], images[i].buffer_data(), images[i].codes.aligned_data(),
                                                images[i].scales.aligned_data(), nullptr);
      return plugin_.call(c, message);
    });
  }

 private:
  const Plugin& plugin_;
};

}  // namespace

std::unique_ptr<QuantRunner> make_host_quant_runner(const Plugin& plugin) {
  return std::make_unique<HostQuantRunner>(plugin);
}

}  // namespace fuseproof::audit
