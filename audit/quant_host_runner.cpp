// quant_host_runner.cpp: QuantRunner for host-memory plugins: each call on guarded images of its own, the calls of a
// batch spread over every core.
#include "audit/call_watch.h"
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

 private:
  const Plugin& plugin_;
};

}  // namespace

std::unique_ptr<QuantRunner> make_host_quant_runner(const Plugin& plugin) {
  return std::make_unique<HostQuantRunner>(plugin);
}

}  // namespace fuseproof::audit
