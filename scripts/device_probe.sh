#!/usr/bin/env bash
# device_probe.sh: prints what a CUDA machine has (GPU, driver, toolchain, torch) and the SASS of CUDA's tanhf.
set -u
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.max.sm,clocks.max.mem --format=csv
nvcc --version | tail -2
cmake --version | head -1; ninja --version; g++ --version | head -1
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.utils.cmake_prefix_path)'
ls /usr/lib/x86_64-linux-gnu/libcrypto.so* 2>/dev/null
lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | sed 's/Flags:.*\(sha_ni\).*/Flags: ... sha_ni .../'
tmp=$(mktemp -d)
cat > "$tmp/t.cu" <<'CU'
extern "C" __global__ void k(const float* x, float* y) { int i = threadIdx.x; y[i] = tanhf(x[i]); }
CU
nvcc -arch=sm_90 -cubin -o "$tmp/t.cubin" "$tmp/t.cu" && cuobjdump -sass "$tmp/t.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | head -40
