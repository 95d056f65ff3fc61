// machine_probe.cpp: machine description for bench.json.
#include "bench/machine_probe.h"

#include <ctime>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <thread>

#include "kernels/cuda_device.h"

#if FUSEPROOF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace fuseproof::bench {

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json host_machine() {
  nlohmann::json m = {{"date", utc_now()}, {"cpu", "unknown"}, {"hardware_threads", std::thread::hardware_concurrency()}};
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  return m;
}

std::string nvidia_driver_version(const std::string& first_line) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>", or for the open module
  // "... Kernel Module for x86_64  580.159.04 ...".
  const size_t k = first_line.find("Kernel Module");
  if (k == std::string::npos) return "";
  std::smatch m;
  const std::string rest = first_line.substr(k);
  return std::regex_search(rest, m, std::regex(R"(\b(\d+\.\d+(\.\d+)?)\b)")) ? m[1].str() : "";
}

#if FUSEPROOF_HAVE_CUDA
nlohmann::json cuda_machine(const std::string& torch_version) {
  int dev = 0, drv = 0, rt = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("bench: no CUDA device to describe");
  }
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::string first_line;
  std::ifstream f("/proc/driver/nvidia/version");
  if (f) std::getline(f, first_line);
  const std::string driver = nvidia_driver_version(first_line);
  int clock_khz = 0, l2 = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  return {{"date", utc_now()},
          {"gpu", p.name},
          {"sm", std::to_string(p.major) + std::to_string(p.minor)},
          {"sms", p.multiProcessorCount},
          {"l2_bytes", l2},
          {"memory_bytes", p.totalGlobalMem},
          {"sm_clock_khz", clock_khz},
          {"driver", driver.empty() ? "unknown" : driver},
          {"driver_cuda", std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10)},
          {"cuda_runtime", std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10)},
          {"torch", torch_version},
          {"kernels_built_for", cuda_built_architectures()}};
}
#else
nlohmann::json cuda_machine(const std::string&) { throw std::runtime_error("bench: this build has no CUDA"); }
#endif

}  // namespace fuseproof::bench
