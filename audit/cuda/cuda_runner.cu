// cuda_runner.cu: KernelRunner for CUDA-memory plugins: guarded device buffers, the 2^32 domain, the PDL producer.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
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

/// x[i] = counter_pattern(seed, i) for i < n.
__global__ void fill_counter(uint16_t* x, size_t n, bool bf16, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = counter_pattern(bf16, seed, i);
}

/// Counts elements of x that differ from counter_pattern(seed, i).
__global__ void count_changed(const uint16_t* x, size_t n, bool bf16, uint64_t seed, unsigned long long* changed) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += x[i] != counter_pattern(bf16, seed, i);
  if (local) atomicAdd(changed, local);
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

/// A device allocation with kGuardElems of fill on each side and room for misalignment. `cache` (optional) is a
/// runner-owned allocation reused from call to call: the widths class makes thousands of calls, and cudaMalloc/cudaFree
/// (which synchronises) per call cost more than the calls.
struct DeviceBuffer {
  struct Cache {
    uint8_t* base = nullptr;
    size_t capacity = 0;
    ~Cache() {
      if (base) cudaFree(base);
    }
  };
  uint8_t* base = nullptr;
  size_t bytes = 0;
  Cache* cache = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(Cache* c) : cache(c) {}
  std::string alloc(size_t elems, uint16_t fill, cudaStream_t s) {
    bytes = (2 * kGuardElems + elems) * 2 + 256;
    if (cache && cache->capacity >= bytes) {
      base = cache->base;
    } else {
      if (cache && cache->base) {
        cudaFree(cache->base);
        cache->base = nullptr;
        cache->capacity = 0;
      }
      FP_CUDA_TRY(cudaMalloc(&base, bytes));
      if (cache) cache->base = base, cache->capacity = bytes;
    }
    fill_u16<<<256, 256, 0, s>>>(reinterpret_cast<uint16_t*>(base), bytes / 2, fill);
    FP_CUDA_TRY(cudaGetLastError());
    return "";
  }
  uint8_t* data(uint32_t misalign) const { return base + kGuardElems * 2 + misalign; }
  ~DeviceBuffer() {
    if (base && !cache) cudaFree(base);
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
    release_domain_buffers();
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

  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& check) override {
    LargeOutcome o;
    o.fault = large(s, check, &o);
    return o;
  }

  uint64_t memory_available() const override {
    size_t free_b = 0, total_b = 0;
    return cudaMemGetInfo(&free_b, &total_b) == cudaSuccess ? uint64_t(free_b) : 0;
  }

  std::string hardware() const override { return hardware_; }

 private:
  std::string run(const CallSpec& s, const std::vector<uint16_t>* stale_x, const std::vector<uint16_t>* stale_bias,
                  int delay_ms, CallOutcome* o) {
    DeviceBuffer xb(&cache_[0]), bb(&cache_[1]), ob(&cache_[2]), xs(&cache_[3]), bs(&cache_[4]);
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
    watch_begin(describe_call(s));
    o->rc = plugin_.call(out, x, bias, s.rows, s.width, s.dtype, stream_, &o->message);
    o->subject_fault = true;  // from here on, a CUDA error is the subject's
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    watch_end();
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

  std::string large(const LargeSpec& s, const ChunkCheck& check, LargeOutcome* o) {
    release_domain_buffers();  // a large call wants the memory
    const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
    const size_t n = size_t(s.rows) * size_t(s.width);
    DeviceBuffer xb, bb, ob;
    if (auto e = xb.alloc(n, kPoison ^ 0x1111, stream_); !e.empty()) return e;
    if (auto e = bb.alloc(size_t(s.width), kPoison ^ 0x2222, stream_); !e.empty()) return e;
    if (auto e = ob.alloc(n, kPoison, stream_); !e.empty()) return e;
    unsigned long long* changed = nullptr;
    FP_CUDA_TRY(cudaMalloc(&changed, sizeof *changed));
    struct Free {
      unsigned long long* p;
      ~Free() { cudaFree(p); }
    } free_changed{changed};
    uint16_t* x = reinterpret_cast<uint16_t*>(xb.data(0));
    uint16_t* b = reinterpret_cast<uint16_t*>(bb.data(0));
    fill_counter<<<4096, 256, 0, stream_>>>(x, n, bf16, s.seed);
    fill_counter<<<64, 256, 0, stream_>>>(b, size_t(s.width), bf16, s.seed ^ kBiasSalt);
    FP_CUDA_TRY(cudaMemsetAsync(changed, 0, sizeof *changed, stream_));
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    watch_begin("rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + ",dtype=" +
                std::to_string(s.dtype) + ",x+0,bias+0,out+0");
    o->rc = plugin_.call(ob.data(0), x, b, s.rows, s.width, s.dtype, stream_, &o->message);
    o->subject_fault = true;
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    watch_end();
    o->subject_fault = false;
    // Inputs and guards, checked where they live.
    count_changed<<<4096, 256, 0, stream_>>>(x, n, bf16, s.seed, changed);
    count_changed<<<64, 256, 0, stream_>>>(b, size_t(s.width), bf16, s.seed ^ kBiasSalt, changed);
    unsigned long long ch = 0;
    FP_CUDA_TRY(cudaMemcpyAsync(&ch, changed, sizeof ch, cudaMemcpyDeviceToHost, stream_));
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    o->inputs_changed = ch;
    for (const DeviceBuffer* gb : {&xb, &bb}) {
      const size_t data_bytes = (gb == &xb ? n : size_t(s.width)) * 2;
      const uint16_t fill = gb == &xb ? uint16_t(kPoison ^ 0x1111) : uint16_t(kPoison ^ 0x2222);
      std::vector<uint8_t> head(kGuardElems * 2), tail(gb->bytes - kGuardElems * 2 - data_bytes);
      FP_CUDA_TRY(cudaMemcpy(head.data(), gb->base, head.size(), cudaMemcpyDeviceToHost));
      FP_CUDA_TRY(cudaMemcpy(tail.data(), gb->data(0) + data_bytes, tail.size(), cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < head.size(); ++i) o->inputs_changed += head[i] != ((i & 1) ? uint8_t(fill >> 8) : uint8_t(fill & 0xFF));
      for (size_t i = 0; i < tail.size(); ++i) o->inputs_changed += tail[i] != ((i & 1) ? uint8_t(fill >> 8) : uint8_t(fill & 0xFF));
    }
    {
      std::vector<uint8_t> head(kGuardElems * 2), tail(ob.bytes - kGuardElems * 2 - n * 2);
      FP_CUDA_TRY(cudaMemcpy(head.data(), ob.base, head.size(), cudaMemcpyDeviceToHost));
      FP_CUDA_TRY(cudaMemcpy(tail.data(), ob.data(0) + n * 2, tail.size(), cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < head.size(); ++i) o->guard_writes += head[i] != ((i & 1) ? uint8_t(kPoison >> 8) : uint8_t(kPoison & 0xFF));
      for (size_t i = 0; i < tail.size(); ++i) o->guard_writes += tail[i] != ((i & 1) ? uint8_t(kPoison >> 8) : uint8_t(kPoison & 0xFF));
    }
    if (o->rc != 0) return "";
    // The output, streamed back in chunks of about 64 MiB, double-buffered: the next copy runs while `check` works.
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 25) / s.width);
    std::vector<uint16_t> buf[2] = {std::vector<uint16_t>(size_t(chunk) * size_t(s.width)),
                                    std::vector<uint16_t>(size_t(chunk) * size_t(s.width))};
    const uint16_t* out = reinterpret_cast<const uint16_t*>(ob.data(0));
    int cur = 0;
    int64_t r0 = 0, rn = std::min(chunk, s.rows);
    FP_CUDA_TRY(cudaMemcpy(buf[0].data(), out, size_t(rn) * size_t(s.width) * 2, cudaMemcpyDeviceToHost));
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
      const bool go_on = check(r0, rn, buf[cur].data());
      if (prefetch.joinable()) prefetch.join();
      if (!copy_error.empty()) return copy_error;
      if (!go_on) break;
      r0 = next0;
      rn = next_n;
      cur ^= 1;
    }
    return "";
  }

  void release_domain_buffers() {
    if (x_) cudaFree(x_), cudaFree(out_), cudaFree(canon_), cudaFree(bias_), cudaFreeHost(host_);
    x_ = out_ = canon_ = bias_ = host_ = nullptr;
    domain_cols_ = x_cols_ = 0;
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
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    watch_begin("rows=65536,width=" + std::to_string(n) + ",dtype=" + std::to_string(dtype) + ",x+0,bias+0,out+0");
    d->rc = plugin_.call(out_, x_, bias_, 65536, n, dtype, stream_, &d->message);
    d->subject_fault = true;
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    watch_end();
    if (d->rc != 0) return "";
    transpose_to_canonical<<<dim3((n + 31) / 32, 65536 / 32), dim3(32, 8), 0, stream_>>>(out_, canon_, n);
    FP_CUDA_TRY(cudaGetLastError());
    FP_CUDA_TRY(cudaMemcpyAsync(host_, canon_, elems * 2, cudaMemcpyDeviceToHost, stream_));
    FP_CUDA_TRY(cudaStreamSynchronize(stream_));
    FP_CUDA_TRY(cudaGetLastError());
    d->out_canonical.assign(host_, host_ + elems);
    return "";
  }

  const Plugin& plugin_;
  DeviceBuffer::Cache cache_[5];  // x, bias, out, and the PDL producer's sources, reused across calls
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
