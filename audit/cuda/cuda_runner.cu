// cuda_runner.cu: KernelRunner for CUDA-memory plugins: guarded device buffers, the 2^32 domain, the PDL producer.
#include <cuda_runtime.h>

#include <cstring>

#include "audit/kernel_runner.h"

namespace fuseproof::audit {

namespace {

#define FP_CUDA_TRY(expr)                                                                   \
  do {                                                                                      \
    const cudaError_t fp_e_ = (expr);                                                       \
    if (fp_e_ != cudaSuccess) return std::string(#expr) + ": " + cudaGetErrorString(fp_e_); \
  } while (0)

__global__ void fill_u16(uint16_t* p, size_t n, uint16_t v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}

/// x[r * n + c] = r: every x pattern down a column.
__global__ void fill_rows_index(uint16_t* x, uint32_t n) {
  const size_t total = size_t(65536) * n;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x)
    x[i] = uint16_t(i / n);
}

/// out[c * 65536 + r] = in[r * n + c], 32 x 32 tiles through shared memory.
__global__ void transpose_to_canonical(const uint16_t* in, uint16_t* out, uint32_t n) {
  __shared__ uint16_t tile[32][33];
  const uint32_t c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
  for (uint32_t k = threadIdx.y; k < 32; k += blockDim.y) {
    const uint32_t r = r0 + k, c = c0 + threadIdx.x;
    if (c < n) tile[k][threadIdx.x] = in[size_t(r) * n + c];
  }
  __syncthreads();
  for (uint32_t k = threadIdx.y; k < 32; k += blockDim.y) {
    const uint32_t c = c0 + k, r = r0 + threadIdx.x;
    if (c < n) out[size_t(c) * 65536 + r] = tile[threadIdx.x][k];
  }
}

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Releases dependents at once (griddepcontrol.launch_dependents), spins `delay_ns`, then writes the real inputs.
/// A dependent that skips griddepcontrol.wait reads the stale ones.
__global__ void late_producer(uint16_t* x, const uint16_t* x_src, size_t nx, uint16_t* bias, const uint16_t* bias_src,
                              size_t nb, uint64_t delay_ns) {
  asm volatile("griddepcontrol.launch_dependents;");
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < delay_ns) {
  }
  for (size_t i = threadIdx.x; i < nx; i += blockDim.x) x[i] = x_src[i];
  for (size_t i = threadIdx.x; i < nb; i += blockDim.x) bias[i] = bias_src[i];
  __threadfence();
}

/// A device allocation with kGuardElems of fill on each side and room for misalignment.
struct DeviceBuffer {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  std::string alloc(size_t elems, uint16_t fill, cudaStream_t s) {
    bytes = (2 * kGuardElems + elems) * 2 + 256;
    FP_CUDA_TRY(cudaMalloc(&base, bytes));
    fill_u16<<<256, 256, 0, s>>>(reinterpret_cast<uint16_t*>(base), bytes / 2, fill);
    FP_CUDA_TRY(cudaGetLastError());
    return "";
  }
  uint8_t* data(uint32_t misalign) const { return base + kGuardElems * 2 + misalign; }
  ~DeviceBuffer() {
    if (base) cudaFree(base);
  }
};

class CudaRunner final : public KernelRunner {
 public:
  explicit CudaRunner(const Plugin& plugin) : plugin_(plugin) {
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    cudaDeviceProp prop{};
    int dev = 0, driver = 0, runtime = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    hardware_ = std::string(prop.name) + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                std::to_string(prop.multiProcessorCount) + " SMs, driver CUDA " + std::to_string(driver / 1000) + "." +
                std::to_string(driver % 1000 / 10) + ", runtime " + std::to_string(runtime / 1000) + "." +
                std::to_string(runtime % 1000 / 10) + "; host " + host_cpu_description();
  }
  ~CudaRunner() override {
    if (x_) cudaFree(x_), cudaFree(out_), cudaFree(canon_), cudaFree(bias_), cudaFreeHost(host_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  CallOutcome call(const CallSpec& s) override {
    CallOutcome o;
    o.fault = run(s, nullptr, nullptr, 0, &o);
    return o;
  }

  std::optional<CallOutcome> call_after_producer(const CallSpec& s, const std::vector<uint16_t>& stale_x,
                                                 const std::vector<uint16_t>& stale_bias, int delay_ms) override {
    CallOutcome o;
    o.fault = run(s, &stale_x, &stale_bias, delay_ms, &o);
    return o;
  }

  DomainBlock domain_block(int32_t dtype, const std::vector<uint16_t>& biases) override {
    DomainBlock d;
    d.fault = domain(dtype, biases, &d);
    return d;
  }

  std::string hardware() const override { return hardware_; }

 private:
  std::string run(const CallSpec& s, const std::vector<uint16_t>* stale_x, const std::vector<uint16_t>* stale_bias,
                  int delay_ms, CallOutcome* o) {
    DeviceBuffer xb, bb, ob, xs, bs;
    if (auto e = xb.alloc(s.x.size(), kPoison ^ 0x1111, stream_); !e.empty()) return e;
    if (auto e = bb.alloc(s.bias.size(), kPoison ^ 0x2222, stream_); !e.empty()) return e;
    if (auto e = ob.alloc(s.out_elems, kPoison, stream_); !e.empty()) return e;
    const bool late = stale_x != nullptr;
    const std::vector<uint16_t>& x0 = late ? *stale_x : s.x;
    const std::vector<uint16_t>& b0 = late ? *stale_bias : s.bias;
    FP_CUDA_TRY(cudaMemcpyAsync(xb.data(s.x_misalign), x0.data(), x0.size() * 2, cudaMemcpyHostToDevice, stream_));
    FP_CUDA_TRY(cudaMemcpyAsync(bb.data(s.bias_misalign), b0.data(), b0.size() * 2, cudaMemcpyHostToDevice, stream_));
    if (late) {
      if (auto e = xs.alloc(s.x.size(), 0, stream_); !e.empty()) return e;
      if (auto e = bs.alloc(s.bias.size(), 0, stream_); !e.empty()) return e;
      FP_CUDA_TRY(cudaMemcpyAsync(xs.data(0), s.x.data(), s.x.size() * 2, cudaMemcpyHostToDevice, stream_));
      FP_CUDA_TRY(cudaMemcpyAsync(bs.data(0), s.bias.data(), s.bias.size() * 2, cudaMemcpyHostToDevice, stream_));
    }
    std::vector<uint8_t> x_before(xb.bytes), b_before(bb.bytes);
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    if (late) {
      // The producer starts from copies of the final guard images, so only the data region changes under it.
      FP_CUDA_TRY(cudaMemcpy(x_before.data(), xb.base, xb.bytes, cudaMemcpyDeviceToHost));
      std::memcpy(x_before.data() + kGuardElems * 2 + s.x_misalign, s.x.data(), s.x.size() * 2);
      FP_CUDA_TRY(cudaMemcpy(b_before.data(), bb.base, bb.bytes, cudaMemcpyDeviceToHost));
      std::memcpy(b_before.data() + kGuardElems * 2 + s.bias_misalign, s.bias.data(), s.bias.size() * 2);
      late_producer<<<1, 256, 0, stream_>>>(reinterpret_cast<uint16_t*>(xb.data(s.x_misalign)),
                                            reinterpret_cast<const uint16_t*>(xs.data(0)), s.x.size(),
                                            reinterpret_cast<uint16_t*>(bb.data(s.bias_misalign)),
                                            reinterpret_cast<const uint16_t*>(bs.data(0)), s.bias.size(),
                                            uint64_t(delay_ms) * 1000000u);
      FP_CUDA_TRY(cudaGetLastError());
    } else {
      FP_CUDA_TRY(cudaMemcpy(x_before.data(), xb.base, xb.bytes, cudaMemcpyDeviceToHost));
      FP_CUDA_TRY(cudaMemcpy(b_before.data(), bb.base, bb.bytes, cudaMemcpyDeviceToHost));
    }
    void* out = s.null_out ? nullptr : ob.data(s.out_misalign);
    const void* x = s.null_x ? nullptr : xb.data(s.x_misalign);
    const void* bias = s.null_bias ? nullptr : bb.data(s.bias_misalign);
    o->rc = plugin_.call(out, x, bias, s.rows, s.width, s.dtype, stream_, &o->message);
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    std::vector<uint8_t> out_all(ob.bytes), x_after(xb.bytes), b_after(bb.bytes);
    FP_CUDA_TRY(cudaMemcpy(out_all.data(), ob.base, ob.bytes, cudaMemcpyDeviceToHost));
    FP_CUDA_TRY(cudaMemcpy(x_after.data(), xb.base, xb.bytes, cudaMemcpyDeviceToHost));
    FP_CUDA_TRY(cudaMemcpy(b_after.data(), bb.base, bb.bytes, cudaMemcpyDeviceToHost));
    const size_t lo = kGuardElems * 2 + s.out_misalign, hi = lo + s.out_elems * 2;
    o->out.resize(s.out_elems);
    std::memcpy(o->out.data(), out_all.data() + lo, s.out_elems * 2);
    for (size_t i = 0; i < out_all.size(); ++i) {
      if (i >= lo && i < hi) continue;
      if (out_all[i] != ((i & 1) ? uint8_t(kPoison >> 8) : uint8_t(kPoison & 0xFF))) ++o->guard_writes;
    }
    o->inputs_intact = x_before == x_after && b_before == b_after;
    return "";
  }

  std::string domain(int32_t dtype, const std::vector<uint16_t>& biases, DomainBlock* d) {
    const uint32_t n = uint32_t(biases.size());
    const size_t elems = size_t(65536) * n;
    if (n > domain_cols_) {
      if (x_) cudaFree(x_), cudaFree(out_), cudaFree(canon_), cudaFree(bias_), cudaFreeHost(host_);
      FP_CUDA_TRY(cudaMalloc(&x_, elems * 2));
      FP_CUDA_TRY(cudaMalloc(&out_, elems * 2));
      FP_CUDA_TRY(cudaMalloc(&canon_, elems * 2));
      FP_CUDA_TRY(cudaMalloc(&bias_, n * 2));
      FP_CUDA_TRY(cudaMallocHost(&host_, elems * 2));
      domain_cols_ = n;
      x_cols_ = 0;
    }
    if (x_cols_ != n) {
      fill_rows_index<<<1024, 256, 0, stream_>>>(x_, n);
      FP_CUDA_TRY(cudaGetLastError());
      x_cols_ = n;
    }
    FP_CUDA_TRY(cudaMemcpyAsync(bias_, biases.data(), n * 2, cudaMemcpyHostToDevice, stream_));
    fill_u16<<<1024, 256, 0, stream_>>>(out_, elems, kPoison);
    FP_CUDA_TRY(cudaGetLastError());
    d->rc = plugin_.call(out_, x_, bias_, 65536, n, dtype, stream_, &d->message);
    if (d->rc != 0) {
      FP_CUDA_TRY(cudaStreamSynchronize(stream_));
      return "";
    }
    transpose_to_canonical<<<dim3((n + 31) / 32, 65536 / 32), dim3(32, 8), 0, stream_>>>(out_, canon_, n);
    FP_CUDA_TRY(cudaGetLastError());
    FP_CUDA_TRY(cudaMemcpyAsync(host_, canon_, elems * 2, cudaMemcpyDeviceToHost, stream_));
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    d->out_canonical.assign(host_, host_ + elems);
    return "";
  }

  const Plugin& plugin_;
  cudaStream_t stream_ = nullptr;
  std::string hardware_;
  uint16_t *x_ = nullptr, *out_ = nullptr, *canon_ = nullptr, *bias_ = nullptr, *host_ = nullptr;
  uint32_t domain_cols_ = 0, x_cols_ = 0;
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
  std::string why;
  if (!cuda_runner_available(&why))
    throw PluginError("audit: plugin " + plugin.info().path + " takes CUDA device memory but no CUDA device is usable: " +
                      why);
  return std::make_unique<CudaRunner>(plugin);
}

}  // namespace fuseproof::audit
