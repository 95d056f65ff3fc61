// quant_cuda_runner.cu: QuantRunner for CUDA-memory plugins: each call's guarded images copied whole to device
// buffers, a batch's copies and calls overlapped on a few non-blocking streams, every byte copied back.
#include <cuda_runtime.h>

#include <algorithm>
#include <optional>

#include "audit/call_watch.h"
#include "audit/cuda/device_slot.h"
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

class CudaQuantRunner final : public QuantRunner {
 public:
  explicit CudaQuantRunner(const Plugin& plugin) : plugin_(plugin) {
    for (auto& s : streams_) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaDeviceProp prop{};
    int dev = 0, driver = 0, runtime = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    arch_ = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    hardware_ = std::string(prop.name) + ", " + arch_ + ", " + std::to_string(prop.multiProcessorCount) +
                " SMs, driver CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
                ", runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
                "; host " + host_cpu_description();
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

  const Plugin& plugin_;
  cudaStream_t streams_[kLanes] = {};
  std::vector<std::vector<DeviceSlot>> slots_;  // per call of a batch, per image
  PinnedStage stage_;
  std::string hardware_, arch_;
};

}  // namespace

std::unique_ptr<QuantRunner> make_cuda_quant_runner(const Plugin& plugin) {
  std::string why;
  if (!cuda_runner_available(&why))
    throw PluginError("audit: plugin " + plugin.info().path + " takes CUDA device memory but no CUDA device is usable: " +
                      why);
  return std::make_unique<CudaQuantRunner>(plugin);
}

}  // namespace fuseproof::audit
