// cuda_timing.cpp: the gate's host function, the event pairs, the median.
#include "bench/cuda_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

namespace fuseproof::bench {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("bench: ") + what + " failed: " + cudaGetErrorName(e));
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {
void wait_for_flag(void* p) {
  auto* f = static_cast<std::atomic<bool>*>(p);
  const auto t0 = std::chrono::steady_clock::now();
  while (!f->load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) std::this_thread::yield();
}
}  // namespace

StreamGate::StreamGate(cudaStream_t s) {
  cuda_check(cudaLaunchHostFunc(s, &wait_for_flag, flag_.get()), "cudaLaunchHostFunc");
}

RepTimer::RepTimer(cudaStream_t s, int reps) : s_(s), ev_(size_t(2 * reps)) {
  for (auto& e : ev_) cuda_check(cudaEventCreate(&e), "cudaEventCreate");
}

RepTimer::~RepTimer() {
  for (auto& e : ev_) cudaEventDestroy(e);
}

double RepTimer::median_us() {
  cuda_check(cudaEventSynchronize(ev_.back()), "cudaEventSynchronize");
  std::vector<double> t;
  for (size_t i = 0; i + 1 < ev_.size(); i += 2) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev_[i], ev_[i + 1]), "cudaEventElapsedTime");
    t.push_back(double(ms) * 1e3);
  }
  return median(t);
}

}  // namespace fuseproof::bench
