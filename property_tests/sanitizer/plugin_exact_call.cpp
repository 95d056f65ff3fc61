// plugin_exact_call.cpp: calls a CUDA kernel plugin once on device buffers of exactly rows x width elements (no guard
// regions, unlike the audit's), so that compute-sanitizer memcheck sees any access outside them. scripts/gpu_sanitize.sh
// runs it on the unmutated control (clean) and on the tail_overread mutant (memcheck must report it).
//   sanitizer_plugin_exact_call PLUGIN.so ROWS WIDTH [bf16|fp16]
// Exit: 0 the call returned and synchronized; 1 the plugin refused the call or CUDA failed; 2 usage or load error;
// 77 no CUDA device (ctest reports the test as skipped).
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/fuseproof_kernel_abi.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sanitizer_plugin_exact_call PLUGIN.so ROWS WIDTH [bf16|fp16]\n");
    return 2;
  }
  const long long rows = std::atoll(argv[2]), width = std::atoll(argv[3]);
  const int32_t dtype = argc > 4 && std::strcmp(argv[4], "fp16") == 0 ? FUSEPROOF_DTYPE_FP16 : FUSEPROOF_DTYPE_BF16;
  if (rows < 1 || width < 1 || rows * width > (1ll << 28)) {
    std::fprintf(stderr, "sanitizer_plugin_exact_call: ROWS and WIDTH must be positive, product at most 2^28\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "sanitizer_plugin_exact_call: no CUDA device\n");
    return 77;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "sanitizer_plugin_exact_call: cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  const auto get = reinterpret_cast<fuseproof_kernel_descriptor_fn>(dlsym(h, FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL));
  // The control and the mutants speak ABI version 1 (the audit's shim takes them; this helper calls them directly).
  const auto* d = get ? reinterpret_cast<const fuseproof_kernel_descriptor_v1_t*>(get()) : nullptr;
  if (!d || d->abi_version != FUSEPROOF_KERNEL_ABI_VERSION_1 || d->memory != FUSEPROOF_MEMORY_CUDA) {
    std::fprintf(stderr, "sanitizer_plugin_exact_call: %s is not a CUDA plugin of ABI version 1\n", argv[1]);
    return 2;
  }
  const size_t n = size_t(rows * width);
  std::vector<uint16_t> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = uint16_t(0x3C00u + (i * 2654435761u >> 20) % 0x400u);  // finite values
  void *x = nullptr, *bias = nullptr, *out = nullptr;
  if (cudaMalloc(&x, n * 2) != cudaSuccess || cudaMalloc(&bias, size_t(width) * 2) != cudaSuccess ||
      cudaMalloc(&out, n * 2) != cudaSuccess) {
    std::fprintf(stderr, "sanitizer_plugin_exact_call: cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(x, host.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(bias, host.data(), size_t(width) * 2, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, n * 2);  // initcheck: out is fully defined even where a kernel would not write
  char error[512] = {0};
  const int rc = d->entry(out, x, bias, rows, width, dtype, nullptr, error, sizeof error);
  const cudaError_t sync = cudaDeviceSynchronize();
  std::printf("%s: %s rows=%lld width=%lld -> entry %d (%s), sync %s\n", d->kernel_name,
              dtype == FUSEPROOF_DTYPE_FP16 ? "fp16" : "bf16", rows, width, rc, rc ? error : "accepted",
              cudaGetErrorName(sync));
  cudaFree(x);
  cudaFree(bias);
  cudaFree(out);
  return rc != 0 || sync != cudaSuccess ? 1 : 0;
}
