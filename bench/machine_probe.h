// machine_probe.h: what a benchmark ran on: date, CPU, and (CUDA builds) GPU, driver, runtime, clocks, L2.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fuseproof::bench {

/// "2026-12-01T12:00:00Z".
std::string utc_now();

/// {date, cpu (the first "model name" of /proc/cpuinfo), hardware_threads}.
nlohmann::json host_machine();

/// {date, gpu, sm, sms, l2_bytes, memory_bytes, sm_clock_khz, driver, driver_cuda, cuda_runtime, torch,
/// kernels_built_for} of the current CUDA device; throws std::runtime_error without one (or without CUDA).
nlohmann::json cuda_machine(const std::string& torch_version);

/// The driver version from the first line of /proc/driver/nvidia/version: the first dotted number after "Kernel
/// Module" (proprietary and open modules word it differently); empty when there is none.
std::string nvidia_driver_version(const std::string& first_line);

}  // namespace fuseproof::bench
