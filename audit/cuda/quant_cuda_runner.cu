// quant_cuda_runner.cu: QuantRunner for CUDA-memory plugins: each call's guarded images copied whole to device
// buffers, a batch's copies and calls overlapped on a few non-blocking streams, every byte copied back.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "audit/call_watch.h"
#include "audit/cuda/device_info.h"
#include "audit/cuda/device_kernels.cuh"
#include "audit/cuda/device_slot.h"
#include "audit/cuda/lane_calls.h"
#include "audit/quant_images.h"
#include "audit/quant_runner.h"
#include "common/phase_clock.h"

namespace fuseproof::audit {

namespace {

/// Streams a batch's calls are spread over: enough to overlap one call's copies with another's kernel.
constexpr int kLanes = 4;

/// Pinned host memory kept from batch to batch: the staging of every copy, so that copies are truly asynchronous
/// (a copy from pageable memory holds the host until it is done) and overlap the other lanes' kernels.
struct PinnedStage {
  uint8_t* base = nullptr;
  size_t capacity = 0;
  std::string reserve(size_t bytes) {
    if (capacity >= bytes) return "";
    if (base) cudaFreeHost(base);
    base = nullptr;
    capacity = 0;
    FP_CUDA_TRY(cudaMallocHost(&base, bytes));
    capacity = bytes;
    return "";
  }
  ~PinnedStage() {
    if (base) cudaFreeHost(base);
  }
};

/// The images of one call in the order they are staged: the input buffers, then codes, then scales.
std::vector<GuardedImage*> images_in_order(QuantImages& im) {
  std::vector<GuardedImage*> v;
  for (auto& b : im.buffers) v.push_back(&b);
  v.push_back(&im.codes);
  v.push_back(&im.scales);
  return v;
}

/// A call's images on the device, on allocations of their own (the concurrent and captured calls keep them).
struct QuantDeviceImages {
  std::vector<DeviceSlot> slots;  // the buffers, then codes, then scales
  std::vector<uint8_t*> data;     // where each buffer's data starts
  uint8_t* codes = nullptr;       // the tensors' aligned starts (a probe's misalignment is abi_quant_call's)
  uint8_t* scales = nullptr;
  /// Copies the images in (allocating on the first use), asynchronously on `s`.
  std::string upload(QuantImages& im, cudaStream_t s) {
    const std::vector<GuardedImage*> order = images_in_order(im);
    const size_t nb = im.buffers.size();
    slots.resize(order.size());
    data.clear();
    for (size_t k = 0; k < order.size(); ++k) {
      if (auto e = slots[k].reserve(order[k]->size_bytes()); !e.empty()) return e;
      FP_CUDA_TRY(cudaMemcpyAsync(slots[k].base, order[k]->bytes(), order[k]->size_bytes(), cudaMemcpyHostToDevice, s));
    }
    for (size_t k = 0; k < nb; ++k) data.push_back(slots[k].base + im.buffers[k].data_offset());
    codes = slots[nb].base + kGuardElems * 2;
    scales = slots[nb + 1].base + kGuardElems * 2;
    return "";
  }
  /// Copies every image back (synchronous).
  std::string download(QuantImages& im) {
    const std::vector<GuardedImage*> order = images_in_order(im);
    for (size_t k = 0; k < order.size(); ++k)
      FP_CUDA_TRY(cudaMemcpy(order[k]->bytes(), slots[k].base, order[k]->size_bytes(), cudaMemcpyDeviceToHost));
    return "";
  }
};

/// Guard bytes of a large call's codes or scales tensor of `bytes` bytes (a DeviceGuarded of (bytes + 1) / 2
/// elements): the guards, and the pad byte of an odd-sized tensor.
std::string tensor_guard_changes(const DeviceGuarded& g, size_t bytes, uint64_t* count) {
  if (auto e = g.guard_changes((bytes + 1) / 2, kPoison, count); !e.empty()) return e;
  if (bytes % 2) {
    uint8_t pad = 0;
    FP_CUDA_TRY(cudaMemcpy(&pad, reinterpret_cast<const uint8_t*>(g.data()) + bytes, 1, cudaMemcpyDeviceToHost));
    *count += pad != uint8_t(kPoison >> 8);
  }
  return "";
}

class CudaQuantRunner final : public QuantRunner {
 public:
  explicit CudaQuantRunner(const Plugin& plugin) : plugin_(plugin) {
    for (auto& s : streams_) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    hardware_ = describe_cuda_device(&arch_);
  }
  ~CudaQuantRunner() override {
    for (auto s : streams_)
      if (s) cudaStreamDestroy(s);
  }

  std::vector<QuantOutcome> call_batch(const std::vector<QuantCallSpec>& specs) override {
    std::vector<QuantOutcome> out(specs.size());
    bool subject_fault = false;
    const std::string fault = batch(specs, out, &subject_fault);
    if (!fault.empty())
      for (auto& o : out) o.fault = fault, o.subject_fault = subject_fault;
    return out;
  }

  std::string hardware() const override { return hardware_; }
  std::string arch() const override { return arch_; }
  int preferred_batch() const override { return 4 * kLanes; }
  std::string buffers_per_call() const override {
    return "every call's guarded images copied whole into device buffers kept from batch to batch while large "
           "enough (the same device addresses; codes and scales poisoned again before each call)";
  }

  uint64_t memory_available() const override { return cuda_memory_free(); }

  std::optional<QuantLargeOutcome> large_call(const QuantLargeSpec& s, const QuantChunkCheck& check) override {
    QuantLargeOutcome o;
    o.fault = large(s, check, &o);
    return o;
  }

  std::optional<QuantConcurrentOutcome> call_concurrent(const std::vector<QuantCallSpec>& specs, int lanes) override {
    QuantConcurrentOutcome co;
    co.fault = concurrent(specs, lanes, co);
    return co;
  }

  std::optional<QuantGraphOutcome> call_graph(const std::vector<std::vector<QuantCallSpec>>& sets) override {
    QuantGraphOutcome g;
    g.fault = graph(sets, g);
    return g;
  }

 private:
  /// Stages every call's images into pinned memory, then on lane i % kLanes: its images to the device, the call, its
  /// images back into the pinned stage; the lanes' work overlaps. A CUDA error after the first call is the subject's.
  std::string batch(const std::vector<QuantCallSpec>& specs, std::vector<QuantOutcome>& out, bool* subject_fault) {
    const size_t n = specs.size();
    std::vector<QuantImages> images = quant_images_of(specs);
    // Where each image sits in the stage and on the device: one slot per image of each call.
    std::vector<std::vector<GuardedImage*>> order(n);
    std::vector<std::vector<size_t>> offset(n);
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      order[i] = images_in_order(images[i]);
      for (GuardedImage* g : order[i]) offset[i].push_back(total), total += g->size_bytes();
    }
    std::optional<PhaseClock> copies(std::in_place, "host-device copies");
    if (auto e = stage_.reserve(std::max<size_t>(total, 1)); !e.empty()) return e;
    if (slots_.size() < n) slots_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      slots_[i].resize(std::max(slots_[i].size(), order[i].size()));
      for (size_t k = 0; k < order[i].size(); ++k) {
        if (auto e = slots_[i][k].reserve(order[i][k]->size_bytes()); !e.empty()) return e;
        copy_bytes(stage_.base + offset[i][k], order[i][k]->bytes(), order[i][k]->size_bytes());
      }
    }
    OverlappedWatch watch;
    for (size_t i = 0; i < n; ++i) {
      cudaStream_t s = streams_[i % kLanes];
      const size_t nb = images[i].buffers.size();
      for (size_t k = 0; k < order[i].size(); ++k)
        FP_CUDA_TRY(cudaMemcpyAsync(slots_[i][k].base, stage_.base + offset[i][k], order[i][k]->size_bytes(),
                                    cudaMemcpyHostToDevice, s));
      std::vector<uint8_t*> data;
      for (size_t k = 0; k < nb; ++k) data.push_back(slots_[i][k].base + images[i].buffers[k].data_offset());
      const fuseproof_call_t c = abi_quant_call(specs[i], data, slots_[i][nb].base + kGuardElems * 2,
                                                slots_[i][nb + 1].base + kGuardElems * 2, s);
      watch.begin(i, describe_quant_call(specs[i]));
      out[i].rc = plugin_.call(c, &out[i].message);
      *subject_fault = true;  // from the first call on, a CUDA error may be the subject's
      FP_CUDA_TRY(cudaGetLastError());
      for (size_t k = 0; k < order[i].size(); ++k)
        FP_CUDA_TRY(cudaMemcpyAsync(stage_.base + offset[i][k], slots_[i][k].base, order[i][k]->size_bytes(),
                                    cudaMemcpyDeviceToHost, s));
    }
    copies.reset();
    {
      const PhaseClock kernel("kernel and copies (overlapped)");
      for (size_t l = 0; l < size_t(kLanes) && l < n; ++l) FP_CUDA_TRY(cudaStreamSynchronize(streams_[l]));
      FP_CUDA_TRY(cudaGetLastError());
    }
    for (size_t i = 0; i < n; ++i) watch.end(i);
    *subject_fault = false;
    const PhaseClock back("guarded images");
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < order[i].size(); ++k)
        copy_bytes(order[i][k]->bytes(), stage_.base + offset[i][k], order[i][k]->size_bytes());
      images[i].finish(specs[i], out[i]);
    }
    return "";
  }

  /// The streams class (audit/cuda/lane_calls.h), gated on the first lane's stream.
  std::string concurrent(const std::vector<QuantCallSpec>& specs, int lanes, QuantConcurrentOutcome& co) {
    std::vector<QuantImages> images = quant_images_of(specs);
    std::vector<QuantDeviceImages> dev;
    const auto issue = [&](size_t i, QuantDeviceImages& d, cudaStream_t s, std::string* message) {
      return plugin_.call(abi_quant_call(specs[i], d.data, d.codes, d.scales, s), message);
    };
    return concurrent_on_streams(streams_[0], specs, lanes, images, dev, issue, co);
  }

  /// The graph class (audit/cuda/lane_calls.h) on the first lane's stream.
  std::string graph(const std::vector<std::vector<QuantCallSpec>>& sets, QuantGraphOutcome& g) {
    std::vector<QuantDeviceImages> dev;
    const auto issue = [&](size_t i, QuantDeviceImages& d, cudaStream_t s, std::string* message) {
      return plugin_.call(abi_quant_call(sets[0][i], d.data, d.codes, d.scales, s), message);
    };
    const auto warm = [&](const QuantCallSpec& s) { return call(s); };
    return graph_replays(streams_[0], sets, [](const std::vector<QuantCallSpec>& v) { return quant_images_of(v); },
                         warm, issue, [](const QuantCallSpec& s) { return describe_quant_call(s); }, dev, g);
  }

  /// The inputs generated on the device, codes and scales poisoned there; the call; inputs and guards checked where
  /// they live; codes and scales streamed back in chunks of about 2^25 elements, double-buffered.
  std::string large(const QuantLargeSpec& s, const QuantChunkCheck& check, QuantLargeOutcome* o) {
    for (auto& call_slots : slots_)
      for (auto& slot : call_slots) slot.release();  // a large call wants the memory
    cudaStream_t stream = streams_[0];
    const QuantCallSpec& v = s.view;
    std::optional<PhaseClock> on_device(std::in_place, "device inputs, guards and checks");
    const bool bf16 = s.bf16();
    std::vector<uint64_t> seeds;
    for (size_t k = 0; k < s.buffer_elems.size(); ++k) seeds.push_back(s.buffer_seed(int(k)));
    DeviceInputs in;
    DeviceGuarded codes, scales;
    if (auto e = codes.alloc((v.codes_bytes + 1) / 2, kPoison, stream); !e.empty()) return e;
    if (auto e = scales.alloc((v.scale_bytes + 1) / 2, kPoison, stream); !e.empty()) return e;
    if (auto e = in.make(s.buffer_elems, std::move(seeds), bf16, stream); !e.empty()) return e;
    uint8_t* codes_data = reinterpret_cast<uint8_t*>(codes.data());
    uint8_t* scales_data = reinterpret_cast<uint8_t*>(scales.data());
    const fuseproof_call_t c = abi_quant_call(v, in.data, codes_data, scales_data, stream);
    if (auto e = watched_call(plugin_, c, describe_quant_call(v), stream, &o->rc, &o->message, &o->subject_fault);
        !e.empty())
      return e;
    if (auto e = in.changes(stream, &o->inputs_changed); !e.empty()) return e;
    if (auto e = tensor_guard_changes(codes, v.codes_bytes, &o->guard_writes); !e.empty()) return e;
    if (auto e = tensor_guard_changes(scales, v.scale_bytes, &o->guard_writes); !e.empty()) return e;
    on_device.reset();
    if (o->rc != 0) return "";
    // Row chunks of about 2^25 elements, double-buffered: the next copy runs while `check` works. The phase
    // "device-to-host copies (waited for)" is the copy time `check` did not hide.
    const size_t row_codes = v.codes_bytes / size_t(v.rows), row_scales = v.scale_bytes / size_t(v.rows);
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 25) / v.width);
    std::vector<uint8_t> cbuf[2], sbuf[2];
    for (int b = 0; b < 2; ++b) cbuf[b].resize(size_t(chunk) * row_codes), sbuf[b].resize(size_t(chunk) * row_scales);
    const auto copy_rows = [&](int b, int64_t r0, int64_t rn) -> std::string {
      FP_CUDA_TRY(cudaMemcpy(cbuf[b].data(), codes_data + size_t(r0) * row_codes, size_t(rn) * row_codes,
                             cudaMemcpyDeviceToHost));
      FP_CUDA_TRY(cudaMemcpy(sbuf[b].data(), scales_data + size_t(r0) * row_scales, size_t(rn) * row_scales,
                             cudaMemcpyDeviceToHost));
      return "";
    };
    int cur = 0;
    int64_t r0 = 0, rn = std::min(chunk, v.rows);
    {
      const PhaseClock first_copy("device-to-host copies (waited for)");
      if (auto e = copy_rows(0, 0, rn); !e.empty()) return e;
    }
    while (r0 < v.rows) {
      const int64_t next0 = r0 + rn, next_n = std::min(chunk, v.rows - next0);
      std::string copy_error;
      std::thread prefetch;
      if (next_n > 0) prefetch = std::thread([&] { copy_error = copy_rows(cur ^ 1, next0, next_n); });
      const bool go_on = check(r0, rn, cbuf[cur].data(), sbuf[cur].data());
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

  const Plugin& plugin_;
  cudaStream_t streams_[kLanes] = {};
  std::vector<std::vector<DeviceSlot>> slots_;  // per call of a batch, per image
  PinnedStage stage_;
  std::string hardware_, arch_;
};

}  // namespace

std::unique_ptr<QuantRunner> make_cuda_quant_runner(const Plugin& plugin) {
  require_cuda_device(plugin);
  return std::make_unique<CudaQuantRunner>(plugin);
}

}  // namespace fuseproof::audit
