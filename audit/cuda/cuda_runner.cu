// cuda_runner.cu: KernelRunner for CUDA-memory plugins: the guarded images copied whole to the device and back, the
// large calls generated on the device, the PDL producer.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "audit/audit_inputs.h"
#include "audit/call_watch.h"
#include "audit/cuda/device_info.h"
#include "audit/cuda/device_kernels.cuh"
#include "audit/cuda/device_slot.h"
#include "audit/cuda/lane_calls.h"
#include "audit/counter_patterns.h"
#include "audit/kernel_runner.h"
#include "common/phase_clock.h"

namespace fuseproof::audit {

namespace {


/// The 8 flag bytes (0 or 1, lowest bit first) of a byte of seen bits, as one little-endian word.
constexpr auto kFlagsOfByte = [] {
  std::array<uint64_t, 256> t{};
  for (unsigned v = 0; v < 256; ++v)
    for (unsigned bit = 0; bit < 8; ++bit) t[v] |= uint64_t((v >> bit) & 1u) << (8 * bit);
  return t;
}();

/// What the PDL producer writes late: up to FUSEPROOF_MAX_INPUTS buffers.
struct LateWrites {
  uint16_t* dst[FUSEPROOF_MAX_INPUTS];
  const uint16_t* src[FUSEPROOF_MAX_INPUTS];
  size_t n[FUSEPROOF_MAX_INPUTS];
  int count;
};

/// Releases dependents at once (griddepcontrol.launch_dependents), spins `delay_ns`, then writes the real inputs.
/// A dependent that skips griddepcontrol.wait reads the stale ones.
__global__ void late_producer(LateWrites w, uint64_t delay_ns) {
  asm volatile("griddepcontrol.launch_dependents;");
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < delay_ns) {
  }
  for (int k = 0; k < w.count; ++k)
    for (size_t i = threadIdx.x; i < w.n[k]; i += blockDim.x) w.dst[k][i] = w.src[k][i];
  __threadfence();
}

/// A call's images on the device, on allocations of their own (the concurrent and captured calls keep them).
struct DeviceImages {
  std::vector<DeviceSlot> slots;  // the buffers, then out
  std::vector<uint8_t*> data;     // where each buffer's data starts
  uint8_t* out = nullptr;
  /// Copies the images in (allocating on the first use), asynchronously on `s`.
  std::string upload(CallImages& im, cudaStream_t s) {
    const size_t nb = im.buffers.size();
    slots.resize(nb + 1);
    data.clear();
    for (size_t k = 0; k < nb; ++k) {
      if (auto e = slots[k].reserve(im.buffers[k].size_bytes()); !e.empty()) return e;
      FP_CUDA_TRY(cudaMemcpyAsync(slots[k].base, im.buffers[k].bytes(), im.buffers[k].size_bytes(),
                                  cudaMemcpyHostToDevice, s));
      data.push_back(slots[k].base + im.buffers[k].data_offset());
    }
    if (auto e = slots[nb].reserve(im.out.size_bytes()); !e.empty()) return e;
    FP_CUDA_TRY(cudaMemcpyAsync(slots[nb].base, im.out.bytes(), im.out.size_bytes(), cudaMemcpyHostToDevice, s));
    out = slots[nb].base + kGuardElems * 2;
    return "";
  }
  /// Copies every image back (synchronous).
  std::string download(CallImages& im) {
    const size_t nb = im.buffers.size();
    for (size_t k = 0; k < nb; ++k)
      FP_CUDA_TRY(cudaMemcpy(im.buffers[k].bytes(), slots[k].base, im.buffers[k].size_bytes(), cudaMemcpyDeviceToHost));
    FP_CUDA_TRY(cudaMemcpy(im.out.bytes(), slots[nb].base, im.out.size_bytes(), cudaMemcpyDeviceToHost));
    return "";
  }
};

class CudaRunner final : public ImageRunner {
 public:
  explicit CudaRunner(const Plugin& plugin) : plugin_(plugin) {
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    hardware_ = describe_cuda_device(&arch_);
  }
  ~CudaRunner() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::optional<CallOutcome> call_after_producer(const CallSpec& s, const CallSpec& stale, int delay_ms) override {
    CallOutcome o;
    CallImages im(stale);
    o.fault = run_images(s, im, &o, &s, delay_ms);
    if (o.fault.empty()) {
      // The buffers hold the real inputs after the producer: compare against those, not the stale ones.
      CallImages want(s);
      for (size_t k = 0; k < im.before.size(); ++k) im.before[k] = want.before[k];
      im.finish(s, o);
    }
    return o;
  }

  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& check) override {
    LargeOutcome o;
    o.fault = large(s, &check, nullptr, &o);
    return o;
  }

  std::optional<LargeOutcome> large_call_compared(const LargeSpec& s, const std::string& key, const RowFn& row,
                                                  DeviceComparison* cmp) override {
    const CallSpec view = s.view();
    if (view.inputs.size() != 2 || view.inputs[0].grouped || view.inputs[1].grouped) return std::nullopt;
    for (auto& slot : slots_) slot.release();  // the table and the large call want the memory
    if (!ensure_table(ExpectedTable{key, row, {}, {}})) return std::nullopt;
    LargeOutcome o;
    o.fault = large(s, nullptr, cmp, &o);
    return o;
  }

  std::optional<std::vector<LargeOutcome>> calls_compared(const std::vector<LargeSpec>& specs, const ExpectedTable& table,
                                                          const Sampling& sampling,
                                                          std::vector<DeviceComparison>* cmps) override {
    for (const LargeSpec& s : specs) {
      const CallSpec view = s.view();
      if (s.patterns == Patterns::kWitness) {
        if (!s.witness || s.witness != specs[0].witness || view.inputs.size() > 4 || s.group_rows != 1)
          return std::nullopt;
        continue;
      }
      if (view.inputs.size() != 2 || view.inputs[0].grouped || view.inputs[1].grouped) return std::nullopt;
    }
    for (auto& slot : slots_) slot.release();
    if (!ensure_table(table)) return std::nullopt;
    std::vector<LargeOutcome> outs(std::max<size_t>(specs.size(), 1));
    cmps->assign(specs.size(), {});
    bool subject = false;
    if (auto e = batch(specs, sampling, outs, *cmps, &subject); !e.empty()) {
      outs[0].fault = e;
      outs[0].subject_fault = subject;
    }
    outs.resize(specs.size());
    return outs;
  }

  uint64_t memory_available() const override { return cuda_memory_free(); }

  std::string hardware() const override { return hardware_; }
  std::string arch() const override { return arch_; }

  std::optional<ConcurrentOutcome> call_concurrent(const std::vector<CallSpec>& specs, int lanes) override {
    ConcurrentOutcome co;
    co.fault = concurrent(specs, lanes, co);
    return co;
  }

  std::optional<GraphOutcome> call_graph(const std::vector<std::vector<CallSpec>>& sets) override {
    GraphOutcome g;
    g.fault = graph(sets, g);
    return g;
  }
  std::vector<Throughput> copy_throughput() override {
    std::vector<Throughput> rates = KernelRunner::copy_throughput();
    // 256 MiB a copy, best of 3: several milliseconds at the bus's rate, well past the size where the rate levels off
    // (the describe child makes these copies before any class runs).
    constexpr size_t kBytes = size_t(256) << 20;
    void* dev = nullptr;
    void* pinned = nullptr;
    if (cudaMalloc(&dev, kBytes) != cudaSuccess) return rates;
    std::vector<uint8_t> pageable(kBytes, 0);
    const bool have_pinned = cudaMallocHost(&pinned, kBytes) == cudaSuccess;
    const auto best = [&](void* dst, const void* src, cudaMemcpyKind kind) {
      double t = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        if (cudaMemcpy(dst, src, kBytes, kind) != cudaSuccess) return 0.0;
        t = std::min(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return double(kBytes) / t / 1e9;
    };
    rates.push_back({"host-to-device, pageable", best(dev, pageable.data(), cudaMemcpyHostToDevice)});
    rates.push_back({"device-to-host, pageable", best(pageable.data(), dev, cudaMemcpyDeviceToHost)});
    if (have_pinned) {
      rates.push_back({"host-to-device, pinned", best(dev, pinned, cudaMemcpyHostToDevice)});
      rates.push_back({"device-to-host, pinned", best(pinned, dev, cudaMemcpyDeviceToHost)});
      cudaFreeHost(pinned);
    }
    cudaFree(dev);
    cudaGetLastError();
    return rates;
  }

  std::string buffers_per_call() const override {
    return "every call's guarded images in device buffers kept from call to call while large enough (the same "
           "device addresses; out poisoned again before each call, on the device from 1 MiB; inputs from 1 MiB "
           "compared on the device with their copy from before the call, brought back only when changed)";
  }

 private:
  /// Images from this size on are checked on the device (run_images): no host snapshot of such an input is made.
  static constexpr size_t kDeviceCheckBytes = size_t(1) << 20;

  size_t snapshot_from() const override { return kDeviceCheckBytes; }

  std::string run(const CallSpec& s, CallImages& im, CallOutcome* o) override {
    return run_images(s, im, o, nullptr, 0);
  }

  /// The images copied to device slots; with `late`, the producer writes late's buffer data over them. Without it,
  /// an image of kDeviceCheckBytes or more is not copied both ways: out is poisoned on the device, and an input is
  /// compared on the device with a copy made before the call, brought back only when it changed, and its verdict
  /// set in CallImages::changed_on_device (such an image has no host snapshot: CallImages gets snapshot_from()).
  std::string run_images(const CallSpec& s, CallImages& im, CallOutcome* o, const CallSpec* late, int delay_ms) {
    const size_t nb = im.buffers.size();
    // Slots: the buffers [0, nb), out nb, the producer's sources [nb + 1, 2nb + 1), the buffers' copies before the
    // call [2nb + 1, 3nb + 1), the change counters 3nb + 1.
    if (slots_.size() < 3 * nb + 2) slots_.resize(3 * nb + 2);
    // Checked on the device: the inputs CallImages made no snapshot of (snapshot_from(); every input has one when
    // `late` is given, since call_after_producer's images are made with the default).
    const auto kept = [&](size_t k) { return im.before[k].empty(); };
    std::optional<PhaseClock> copies(std::in_place, "host-device copies");
    std::vector<uint8_t*> dev_data;
    for (size_t k = 0; k < nb; ++k) {
      GuardedImage& img = im.buffers[k];
      if (auto e = slots_[k].reserve(img.size_bytes()); !e.empty()) return e;
      FP_CUDA_TRY(cudaMemcpyAsync(slots_[k].base, img.bytes(), img.size_bytes(), cudaMemcpyHostToDevice, stream_));
      if (kept(k)) {
        DeviceSlot& before = slots_[2 * nb + 1 + k];
        if (auto e = before.reserve(img.size_bytes()); !e.empty()) return e;
        FP_CUDA_TRY(cudaMemcpyAsync(before.base, slots_[k].base, img.size_bytes(), cudaMemcpyDeviceToDevice, stream_));
      }
      dev_data.push_back(slots_[k].base + img.data_offset());
    }
    DeviceSlot& out_slot = slots_[nb];
    if (auto e = out_slot.reserve(im.out.size_bytes()); !e.empty()) return e;
    if (!late && im.out.size_bytes() >= kDeviceCheckBytes) {
      // Every byte of the out image is the fill pattern (GuardedImage: 256-byte multiple, little-endian words).
      fill_u16<<<1024, 256, 0, stream_>>>(reinterpret_cast<uint16_t*>(out_slot.base), im.out.size_bytes() / 2,
                                          im.out.fill());
      FP_CUDA_TRY(cudaGetLastError());
    } else {
      FP_CUDA_TRY(cudaMemcpyAsync(out_slot.base, im.out.bytes(), im.out.size_bytes(), cudaMemcpyHostToDevice, stream_));
    }
    if (late) {
      LateWrites w{};
      w.count = int(nb);
      for (size_t k = 0; k < nb; ++k) {
        DeviceSlot& src = slots_[nb + 1 + k];
        const size_t bytes = late->buffers[k].size() * 2;
        if (auto e = src.reserve(std::max<size_t>(bytes, 2)); !e.empty()) return e;
        FP_CUDA_TRY(cudaMemcpyAsync(src.base, late->buffers[k].data(), bytes, cudaMemcpyHostToDevice, stream_));
        w.dst[k] = reinterpret_cast<uint16_t*>(dev_data[k]);
        w.src[k] = reinterpret_cast<const uint16_t*>(src.base);
        w.n[k] = late->buffers[k].size();
      }
      FP_CUDA_TRY(cudaStreamSynchronize(stream_));
      late_producer<<<1, 256, 0, stream_>>>(w, uint64_t(delay_ms) * 1000000u);
      FP_CUDA_TRY(cudaGetLastError());
    } else {
      FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    }
    const fuseproof_call_t c = abi_call(s, dev_data, out_slot.base + kGuardElems * 2, stream_);
    copies.reset();
    std::optional<PhaseClock> kernel(std::in_place, "kernel");
    watch_begin(describe_call(s));
    o->rc = plugin_.call(c, &o->message);
    o->subject_fault = true;  // from here on, a CUDA error is the subject's
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    watch_end();
    kernel.reset();
    const PhaseClock copies_back("host-device copies");
    std::vector<unsigned long long> changed(nb, 1);  // 1: bring the image back
    if (nb) {
      DeviceSlot& counters = slots_[3 * nb + 1];
      if (auto e = counters.reserve(nb * sizeof(unsigned long long)); !e.empty()) return e;
      auto* count = reinterpret_cast<unsigned long long*>(counters.base);
      FP_CUDA_TRY(cudaMemsetAsync(count, 0, nb * sizeof(unsigned long long), stream_));
      bool any = false;
      for (size_t k = 0; k < nb; ++k)
        if (kept(k)) {
          count_different<<<1024, 256, 0, stream_>>>(reinterpret_cast<const uint16_t*>(slots_[k].base),
                                                     reinterpret_cast<const uint16_t*>(slots_[2 * nb + 1 + k].base),
                                                     im.buffers[k].size_bytes() / 2, count + k);
          FP_CUDA_TRY(cudaGetLastError());
          any = true;
        }
      if (any) {
        std::vector<unsigned long long> got(nb, 0);
        FP_CUDA_TRY(cudaMemcpyAsync(got.data(), count, nb * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream_));
        FP_CUDA_TRY(cudaStreamSynchronize(stream_));
        for (size_t k = 0; k < nb; ++k)
          if (kept(k)) changed[k] = got[k];
      }
      for (size_t k = 0; k < nb; ++k)
        if (kept(k)) im.changed_on_device[k] = changed[k] ? 1 : 0;
    }
    for (size_t k = 0; k < nb; ++k)
      if (changed[k])
        FP_CUDA_TRY(cudaMemcpy(im.buffers[k].bytes(), slots_[k].base, im.buffers[k].size_bytes(), cudaMemcpyDeviceToHost));
    FP_CUDA_TRY(cudaMemcpy(im.out.bytes(), out_slot.base, im.out.size_bytes(), cudaMemcpyDeviceToHost));
    o->subject_fault = false;
    return "";
  }

  /// The streams class (audit/cuda/lane_calls.h), gated on the runner's stream.
  std::string concurrent(const std::vector<CallSpec>& specs, int lanes, ConcurrentOutcome& co) {
    std::vector<CallImages> images = images_of(specs);
    std::vector<DeviceImages> dev;
    const auto issue = [&](size_t i, DeviceImages& d, cudaStream_t s, std::string* message) {
      return plugin_.call(abi_call(specs[i], d.data, d.out, s), message);
    };
    return concurrent_on_streams(stream_, specs, lanes, images, dev, issue, co);
  }

  /// The graph class (audit/cuda/lane_calls.h) on the runner's stream.
  std::string graph(const std::vector<std::vector<CallSpec>>& sets, GraphOutcome& g) {
    std::vector<DeviceImages> dev;
    const auto issue = [&](size_t i, DeviceImages& d, cudaStream_t s, std::string* message) {
      return plugin_.call(abi_call(sets[0][i], d.data, d.out, s), message);
    };
    const auto warm = [&](const CallSpec& s) { return call(s); };
    return graph_replays(stream_, sets, [](const std::vector<CallSpec>& v) { return images_of(v); }, warm, issue,
                         [](const CallSpec& s) { return describe_call(s); }, dev, g);
  }

  /// The 2^32 expected outputs on the device (8 GiB), rows computed by the domain driver's workers and copied up
  /// as they complete; kept while `key` stays the same. false when there is no room (the caller compares on the host).
  bool ensure_table(const ExpectedTable& t) {
    const std::string& key = t.key;
    const RowFn& row = t.row;
    if (table_.base && table_key_ == key) return true;
    table_.release();
    table_key_.clear();
    const PhaseClock clock("expected table (reference rows on every core, copied to the device)");
    if (!table_.reserve(size_t(kDomainSize) * 2).empty()) {
      cudaGetLastError();  // an out-of-memory here is no fault of anyone's
      return false;
    }
    std::mutex mu;
    std::string error;
    SweepOptions so;
    so.in_order = bool(t.in_order);  // the rows in order for a flat digest, else each block copied up where it is made
    sweep_domain(row, [&](uint32_t first, uint32_t count, const uint16_t* out) {
      const cudaError_t e = cudaMemcpy(table_.base + size_t(first) * 65536 * 2, out, size_t(count) * 65536 * 2,
                                       cudaMemcpyHostToDevice);
      if (e != cudaSuccess) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.empty()) error = cudaGetErrorString(e);
      }
      if (t.in_order) t.in_order(first, count, out);
      else if (t.tap) t.tap(first, count, out);
    }, so);
    if (!error.empty() || cudaDeviceSynchronize() != cudaSuccess) {
      cudaGetLastError();
      table_.release();
      return false;
    }
    table_key_ = key;
    return true;
  }

  /// Compares out [rows, width] with the table on the device: cmp's counts and seen flags.
  std::string compare_on_device(const LargeSpec& s, const CallSpec& view, const std::vector<uint8_t*>& data,
                                const uint16_t* out, DeviceComparison* cmp) {
    const PhaseClock clock("comparison on the device");
    DeviceSlot& res = result_;
    constexpr size_t kSeenWords = 65536 / 32;
    if (auto e = res.reserve(sizeof(unsigned long long) + kSeenWords * 4); !e.empty()) return e;
    auto* mismatches = reinterpret_cast<unsigned long long*>(res.base);
    auto* seen = reinterpret_cast<unsigned int*>(res.base + sizeof(unsigned long long));
    FP_CUDA_TRY(cudaMemsetAsync(res.base, 0, sizeof(unsigned long long) + kSeenWords * 4, stream_));
    const InputView& a = view.inputs[0];
    const InputView& b = view.inputs[1];
    const auto* pa = reinterpret_cast<const uint16_t*>(data[size_t(a.buffer)]) + a.offset;
    const auto* pb = reinterpret_cast<const uint16_t*>(data[size_t(b.buffer)]) + b.offset;
    const dim3 grid(unsigned(std::min<int64_t>((s.width + 255) / 256, 32)), unsigned(std::min<int64_t>(s.rows, 65535)));
    compare_with_table<<<grid, 256, 0, stream_>>>(out, s.rows, s.width, pa, a.stride[0], a.stride[1], pb, b.stride[0],
                                                  b.stride[1], reinterpret_cast<const uint16_t*>(table_.base),
                                                  mismatches, seen);
    FP_CUDA_TRY(cudaGetLastError());
    unsigned long long n = 0;
    std::vector<unsigned int> words(kSeenWords);
    FP_CUDA_TRY(cudaMemcpyAsync(&n, mismatches, sizeof n, cudaMemcpyDeviceToHost, stream_));
    FP_CUDA_TRY(cudaMemcpyAsync(words.data(), seen, kSeenWords * 4, cudaMemcpyDeviceToHost, stream_));
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    cmp->compared = uint64_t(s.rows) * uint64_t(s.width);
    cmp->mismatches = n;
    cmp->seen.assign(65536, 0);
    for (size_t e = 0; e < 65536; ++e) cmp->seen[e] = (words[e >> 5] >> (e & 31)) & 1u;
    return "";
  }

  /// The large call; its output streamed back to `check`, or (with `cmp`) compared with the table on the device.
  std::string large(const LargeSpec& s, const ChunkCheck* check, DeviceComparison* cmp, LargeOutcome* o) {
    for (auto& slot : slots_) slot.release();  // a large call wants the memory
    std::optional<PhaseClock> on_device(std::in_place, "device inputs, guards and checks");
    const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
    const size_t n = size_t(s.rows) * size_t(s.width);
    const int nb = int(s.op->buffers().size());
    std::vector<size_t> elems;
    std::vector<uint64_t> seeds;
    for (int k = 0; k < nb; ++k) elems.push_back(s.buffer_elems(k)), seeds.push_back(s.buffer_seed(k));
    DeviceInputs in;
    DeviceGuarded ob;
    if (auto e = ob.alloc(n, kPoison, stream_); !e.empty()) return e;
    if (auto e = in.make(std::move(elems), std::move(seeds), bf16, stream_); !e.empty()) return e;
    const std::vector<uint8_t*>& data = in.data;
    const CallSpec view = s.view();
    const fuseproof_call_t c = abi_call(view, data, reinterpret_cast<uint8_t*>(ob.data()), stream_);
    if (auto e = watched_call(plugin_, c, describe_call(view), stream_, &o->rc, &o->message, &o->subject_fault);
        !e.empty())
      return e;
    // Inputs and guards, checked where they live.
    if (auto e = in.changes(stream_, &o->inputs_changed); !e.empty()) return e;
    if (auto e = ob.guard_changes(n, kPoison, &o->guard_writes); !e.empty()) return e;
    on_device.reset();
    if (o->rc != 0) return "";
    if (cmp) return compare_on_device(s, view, data, ob.data(), cmp);
    // The output, streamed back in chunks of about 64 MiB, double-buffered: the next copy runs while `check` works.
    // The phase "device-to-host copies (waited for)" is the copy time `check` did not hide.
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 25) / s.width);
    std::vector<uint16_t> buf[2] = {std::vector<uint16_t>(size_t(chunk) * size_t(s.width)),
                                    std::vector<uint16_t>(size_t(chunk) * size_t(s.width))};
    const uint16_t* out = ob.data();
    int cur = 0;
    int64_t r0 = 0, rn = std::min(chunk, s.rows);
    {
      const PhaseClock first_copy("device-to-host copies (waited for)");
      FP_CUDA_TRY(cudaMemcpy(buf[0].data(), out, size_t(rn) * size_t(s.width) * 2, cudaMemcpyDeviceToHost));
    }
    while (r0 < s.rows) {
      const int64_t next0 = r0 + rn, next_n = std::min(chunk, s.rows - next0);
      std::string copy_error;
      std::thread prefetch;
      if (next_n > 0)
        prefetch = std::thread([&] {
          const cudaError_t e = cudaMemcpy(buf[cur ^ 1].data(), out + size_t(next0) * size_t(s.width),
                                           size_t(next_n) * size_t(s.width) * 2, cudaMemcpyDeviceToHost);
          if (e != cudaSuccess) copy_error = std::string("cudaMemcpy: ") + cudaGetErrorString(e);
        });
      const bool go_on = (*check)(r0, rn, buf[cur].data());
      if (prefetch.joinable()) {
        const PhaseClock wait("device-to-host copies (waited for)");
        prefetch.join();
      }
      if (!copy_error.empty()) return copy_error;
      if (!go_on) break;
      r0 = next0;
      rn = next_n;
      cur ^= 1;
    }
    return "";
  }

  /// calls_compared's calls on one arena: per call, each buffer as [guard | data | guard] and its data's copy from
  /// before the call, then out as [guard | data | guard]; per call 8 counters (inputs changed, input guard bytes, out
  /// guard bytes, mismatches, elements off the grid) and 65,536 seen bits. Every call and check is enqueued on the
  /// runner's stream; one synchronisation at the end.
  std::string batch(const std::vector<LargeSpec>& specs, const Sampling& sampling, std::vector<LargeOutcome>& outs,
                    std::vector<DeviceComparison>& cmps, bool* subject) {
    const size_t n = specs.size();
    if (!n) return "";
    std::optional<PhaseClock> on_device(std::in_place, "device inputs, guards and checks");
    constexpr size_t kAlign = 128;  // elements: every region starts 256-byte aligned
    const auto up = [](size_t e) { return (e + kAlign - 1) / kAlign * kAlign; };
    struct Layout {
      std::vector<size_t> buf, before, elems;  // element offsets into the arena, and each buffer's elements
      size_t out = 0, out_elems = 0;
      CallSpec view;
    };
    std::vector<Layout> lay(n);
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      const LargeSpec& s = specs[i];
      Layout& l = lay[i];
      l.view = s.view();
      for (int k = 0; k < int(s.op->buffers().size()); ++k) {
        const size_t e = s.buffer_elems(k);
        l.elems.push_back(e);
        l.buf.push_back(total);
        total += up(2 * kGuardElems + e);
        l.before.push_back(total);
        total += up(std::max<size_t>(e, 1));
      }
      l.out_elems = size_t(s.rows) * size_t(s.width);
      l.out = total;
      total += up(2 * kGuardElems + l.out_elems);
    }
    constexpr size_t kCounters = 8, kSeenWords = 65536 / 32;
    const size_t per_call = kCounters * sizeof(unsigned long long) + kSeenWords * 4;
    if (auto e = arena_.reserve(total * 2); !e.empty()) return e;
    if (auto e = result_.reserve(n * per_call); !e.empty()) return e;
    const bool bf16 = specs[0].dtype == FUSEPROOF_DTYPE_BF16;
    const WitnessPairs* wp = specs[0].patterns == Patterns::kWitness ? specs[0].witness : nullptr;
    uint16_t* wa = nullptr;
    uint16_t* wb = nullptr;
    uint32_t* wi = nullptr;
    if (wp) {  // the stage's tuples and b indices, shared by the batch's calls
      const size_t a_bytes = wp->a.size() * 8, b_bytes = wp->b.size() * 8, i_bytes = wp->b_index.size() * 4;
      if (auto e = witness_.reserve(a_bytes + b_bytes + i_bytes + 16); !e.empty()) return e;
      wa = reinterpret_cast<uint16_t*>(witness_.base);
      wb = reinterpret_cast<uint16_t*>(witness_.base + a_bytes);
      wi = reinterpret_cast<uint32_t*>(witness_.base + a_bytes + b_bytes);
      static_assert(sizeof(wp->a[0]) == 8, "4 inputs of 2 bytes");
      FP_CUDA_TRY(cudaMemcpyAsync(wa, wp->a.data(), a_bytes, cudaMemcpyHostToDevice, stream_));
      FP_CUDA_TRY(cudaMemcpyAsync(wb, wp->b.data(), b_bytes, cudaMemcpyHostToDevice, stream_));
      FP_CUDA_TRY(cudaMemcpyAsync(wi, wp->b_index.data(), i_bytes, cudaMemcpyHostToDevice, stream_));
    }
    const std::vector<uint16_t> special = extreme_patterns(bf16 ? ref::Dtype::kBf16 : ref::Dtype::kFp16);
    if (auto e = special_.reserve(special.size() * 2); !e.empty()) return e;
    FP_CUDA_TRY(cudaMemcpyAsync(special_.base, special.data(), special.size() * 2, cudaMemcpyHostToDevice, stream_));
    FP_CUDA_TRY(cudaMemsetAsync(result_.base, 0, n * per_call, stream_));
    auto* arena = reinterpret_cast<uint16_t*>(arena_.base);
    const auto* sp = reinterpret_cast<const uint16_t*>(special_.base);
    const auto counters = [&](size_t i) {
      return reinterpret_cast<unsigned long long*>(result_.base + i * per_call);
    };
    const auto seen_of = [&](size_t i) {
      return reinterpret_cast<unsigned int*>(result_.base + i * per_call + kCounters * sizeof(unsigned long long));
    };
    const auto blocks = [](size_t elems) { return unsigned(std::min<size_t>(1024, (elems + 255) / 256)); };
    const auto view_ptr = [&](const Layout& l, const InputView& v) {
      return arena + l.buf[size_t(v.buffer)] + kGuardElems + v.offset;
    };
    const auto grid_of = [](const LargeSpec& s) {
      const unsigned x = unsigned(std::min<int64_t>((s.width + 255) / 256, 32));
      return dim3(x, unsigned(std::min<int64_t>(s.rows, std::max<int64_t>(1, 1024 / x))));
    };
    // Inputs, their copies from before the call, and out poisoned; the grid checked before any subject runs.
    for (size_t i = 0; i < n; ++i) {
      const LargeSpec& s = specs[i];
      const Layout& l = lay[i];
      for (int k = 0; k < int(l.elems.size()); ++k) {
        const size_t e = l.elems[size_t(k)];
        const int kind = s.patterns == Patterns::kWeighted ? 1 : 0;
        fill_region<<<blocks(e + 2 * kGuardElems), 256, 0, stream_>>>(arena + l.buf[size_t(k)], kGuardElems, e,
                                                                       input_guard_fill(k), kind, bf16,
                                                                       s.buffer_seed(k), sp, special.size());
        FP_CUDA_TRY(cudaGetLastError());
      }
      if (s.patterns == Patterns::kWitness) {
        Views vs{};
        vs.n = int(l.view.inputs.size());
        for (int q = 0; q < vs.n; ++q) {
          const InputView& iv = l.view.inputs[size_t(q)];
          vs.p[q] = view_ptr(l, iv);
          vs.s0[q] = iv.stride[0];
          vs.s1[q] = iv.stride[1];
        }
        write_witness<<<blocks(l.out_elems), 256, 0, stream_>>>(vs, s.rows, s.width, s.pairs, wp->na, s.b_first, wa,
                                                                 wb, wi, wp->b_bits);
        FP_CUDA_TRY(cudaGetLastError());
      }
      if (s.patterns == Patterns::kGrid) {
        const InputView& a = l.view.inputs[0];
        const InputView& b = l.view.inputs[1];
        if (s.rows > 65536 || s.grid_col0 + uint64_t(s.width) > 65536) return "calls_compared: a grid past 2^16";
        write_grid<<<grid_of(s), 256, 0, stream_>>>(view_ptr(l, a), a.stride[0], a.stride[1], view_ptr(l, b),
                                                    b.stride[0], b.stride[1], s.rows, s.width, s.grid_col0);
        FP_CUDA_TRY(cudaGetLastError());
        count_off_grid<<<grid_of(s), 256, 0, stream_>>>(view_ptr(l, a), a.stride[0], a.stride[1], view_ptr(l, b),
                                                        b.stride[0], b.stride[1], s.rows, s.width, s.grid_col0,
                                                        counters(i) + 4);
        FP_CUDA_TRY(cudaGetLastError());
      }
      for (size_t k = 0; k < l.elems.size(); ++k)
        FP_CUDA_TRY(cudaMemcpyAsync(arena + l.before[k], arena + l.buf[k] + kGuardElems, l.elems[k] * 2,
                                    cudaMemcpyDeviceToDevice, stream_));
      fill_region<<<blocks(l.out_elems + 2 * kGuardElems), 256, 0, stream_>>>(arena + l.out, kGuardElems, l.out_elems,
                                                                              kPoison, 2, bf16, 0, sp, 0);
      FP_CUDA_TRY(cudaGetLastError());
    }
    on_device.reset();
    // The subject's calls, each followed by its checks, all on the stream; one synchronisation.
    std::optional<PhaseClock> kernel(std::in_place, "kernel and checks (one synchronisation a batch)");
    watch_begin(describe_call(lay[0].view) + (n > 1 ? " and " + std::to_string(n - 1) + " more calls, made back to "
                                                      "back with one synchronisation" : std::string()));
    *subject = true;
    for (size_t i = 0; i < n; ++i) {
      const LargeSpec& s = specs[i];
      const Layout& l = lay[i];
      std::vector<uint8_t*> data;
      for (size_t k = 0; k < l.elems.size(); ++k)
        data.push_back(reinterpret_cast<uint8_t*>(arena + l.buf[k] + kGuardElems));
      uint16_t* out = arena + l.out + kGuardElems;
      outs[i].rc = plugin_.call(abi_call(l.view, data, reinterpret_cast<uint8_t*>(out), stream_), &outs[i].message);
      unsigned long long* c = counters(i);
      for (size_t k = 0; k < l.elems.size(); ++k) {
        uint16_t* base = arena + l.buf[k];
        count_different<<<blocks(l.elems[k]), 256, 0, stream_>>>(base + kGuardElems, arena + l.before[k], l.elems[k],
                                                                  c + 0);
        count_fill_bytes_changed<<<1, 256, 0, stream_>>>(base, kGuardElems, input_guard_fill(int(k)), c + 1);
        count_fill_bytes_changed<<<1, 256, 0, stream_>>>(base + kGuardElems + l.elems[k], kGuardElems,
                                                         input_guard_fill(int(k)), c + 1);
      }
      count_fill_bytes_changed<<<1, 256, 0, stream_>>>(arena + l.out, kGuardElems, kPoison, c + 2);
      count_fill_bytes_changed<<<1, 256, 0, stream_>>>(out + l.out_elems, kGuardElems, kPoison, c + 2);
      if (outs[i].rc == 0 && wp) {
        compare_pairs<<<blocks(s.pairs), 256, 0, stream_>>>(out, s.pairs, wp->na, s.b_first, wi,
                                                            reinterpret_cast<const uint16_t*>(table_.base),
                                                            sampling.index_every, c + 3, seen_of(i));
      } else if (outs[i].rc == 0) {
        const InputView& a = l.view.inputs[0];
        const InputView& b = l.view.inputs[1];
        compare_sampled<<<grid_of(s), 256, 0, stream_>>>(out, s.rows, s.width, view_ptr(l, a), a.stride[0],
                                                         a.stride[1], view_ptr(l, b), b.stride[0], b.stride[1],
                                                         reinterpret_cast<const uint16_t*>(table_.base),
                                                         sampling.row_every, sampling.index_every, c + 3, seen_of(i));
      }
      FP_CUDA_TRY(cudaGetLastError());
    }
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    watch_end();
    *subject = false;
    kernel.reset();
    const PhaseClock back("counts back to the host");
    std::vector<uint8_t> res(n * per_call);
    FP_CUDA_TRY(cudaMemcpy(res.data(), result_.base, res.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) {
      unsigned long long c[kCounters];
      std::memcpy(c, res.data() + i * per_call, sizeof c);
      if (c[4]) return "calls_compared: " + std::to_string(c[4]) + " view elements of " + describe_call(lay[i].view) +
                       " are not the grid's (the views overlap, or the layout is not one the grid can express)";
      outs[i].inputs_changed = c[0] + (c[1] + 1) / 2;
      outs[i].guard_writes = c[2];
      DeviceComparison& cmp = cmps[i];
      cmp.compared = outs[i].rc != 0 ? 0 : wp ? specs[i].pairs : lay[i].out_elems;
      cmp.mismatches = c[3];
      cmp.seen.resize(65536);
      const uint8_t* w = res.data() + i * per_call + kCounters * sizeof(unsigned long long);
      for (size_t b = 0; b < 8192; ++b)  // each byte of the little-endian words: 8 flags at once
        std::memcpy(cmp.seen.data() + 8 * b, &kFlagsOfByte[w[b]], 8);
    }
    return "";
  }

  const Plugin& plugin_;
  DeviceSlot arena_;    // calls_compared's calls
  DeviceSlot special_;  // the weighted patterns' special values, on the device
  DeviceSlot witness_;  // a stage's tuples and b indices (kWitness)
  std::vector<DeviceSlot> slots_;  // per buffer, out, and the PDL producer's sources, reused across calls
  DeviceSlot table_;               // large_call_compared's 2^32 expected outputs, for table_key_
  std::string table_key_;
  DeviceSlot result_;              // the device comparison's counts
  cudaStream_t stream_ = nullptr;
  std::string hardware_, arch_;
};

}  // namespace

bool cuda_runner_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

std::unique_ptr<KernelRunner> make_cuda_runner(const Plugin& plugin) {
  require_cuda_device(plugin);
  return std::make_unique<CudaRunner>(plugin);
}

}  // namespace fuseproof::audit
