// kernel_runner.cpp: the parts every runner shares: the call's images and their checks, counter-filled buffers.
#include "audit/kernel_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "audit/audit_inputs.h"
#include "audit/counter_patterns.h"
#include "common/parallel_for.h"
#include "common/phase_clock.h"
#include "common/sha256.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace fuseproof::audit {

uint64_t host_memory_available() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

std::string memory_shortfall(const std::string& name, const std::string& why, uint64_t need, uint64_t have) {
  if (!have || need <= have) return "";
  char b[200];
  std::snprintf(b, sizeof b, "%s (%s: needs %.1f GiB, %.1f GiB free)", name.c_str(), why.c_str(),
                double(need) / double(1ull << 30), double(have) / double(1ull << 30));
  return b;
}

std::pair<int, uint64_t> overlap_of(const std::vector<Span>& spans, int lanes) {
  std::vector<std::pair<double, int>> ev;
  for (const Span& sp : spans) ev.push_back({sp.start_us, 1}), ev.push_back({sp.end_us, -1});
  std::sort(ev.begin(), ev.end());  // an end before a start at the same instant: touching spans do not overlap
  int now = 0, most = 0;
  for (const auto& e : ev) most = std::max(most, now += e.second);
  uint64_t pairs = 0;
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t j = i + 1; j < spans.size(); ++j)
      if (int(i) % lanes != int(j) % lanes && spans[i].start_us < spans[j].end_us &&
          spans[j].start_us < spans[i].end_us)
        ++pairs;
  return {most, pairs};
}

uint64_t LargeSpec::buffer_seed(int k) const { return k == 0 ? seed : seed ^ (kBiasSalt * uint64_t(k)); }

size_t LargeSpec::buffer_elems(int k) const {
  return size_t(op->buffer_rows(k, rows, group_rows) * op->buffer_row_elems(k, width));
}

uint16_t LargeSpec::input(int i, int64_t r, int64_t c) const {
  const bool bf16 = dtype == FUSEPROOF_DTYPE_BF16;
  const uint64_t seed_k = buffer_seed(op->buffer_of(i)), at = uint64_t(op->input_offset(i, r, c, width, group_rows));
  switch (patterns) {
    case Patterns::kCounter: break;
    case Patterns::kWeighted: {
      static const std::vector<uint16_t> special[2] = {extreme_patterns(ref::Dtype::kFp16),
                                                       extreme_patterns(ref::Dtype::kBf16)};
      const std::vector<uint16_t>& sp = special[bf16 ? 1 : 0];
      return weighted_pattern_at(bf16, seed_k, at, sp.data(), sp.size());
    }
    case Patterns::kGrid:
      if (i == 0) return uint16_t(r);
      if (i == 1) return uint16_t(grid_col0 + uint32_t(c));
      break;
    case Patterns::kWitness: {
      uint64_t p = uint64_t(r) * uint64_t(width) + uint64_t(c);
      if (p >= pairs) p %= pairs;
      const WitnessPairs& w = *witness;
      const uint32_t ib = w.b_index[b_first + size_t(p / w.na)];
      return (w.b_bits >> i & 1u) ? w.b[ib][size_t(i)] : w.a[size_t(p % w.na)][size_t(i)];
    }
  }
  return counter_pattern(bf16, seed_k, at);
}

void LargeSpec::input_run(int i, int64_t r, int64_t c0, int64_t n, uint16_t* out) const {
  if (patterns != Patterns::kCounter) {
    for (int64_t j = 0; j < n; ++j) out[j] = input(i, r, c0 + j);
    return;
  }
  counter_run(dtype == FUSEPROOF_DTYPE_BF16, buffer_seed(op->buffer_of(i)),
              uint64_t(op->input_offset(i, r, c0, width, group_rows)), size_t(n), out);
}

CallSpec LargeSpec::view() const {
  CallSpec v = make_call(*op, 0, width, dtype, group_rows);  // the views only: no buffers are copied
  v.rows = rows;
  return v;
}

CallImages::CallImages(const CallSpec& s, size_t snapshot_from) : out(s.out_elems, kPoison, s.out_misalign) {
  for (size_t k = 0; k < s.buffers.size(); ++k) {
    buffers.emplace_back(s.buffers[k].data(), s.buffers[k].size(), input_guard_fill(int(k)));
    const bool snap = buffers.back().size_bytes() < snapshot_from;
    before.push_back(snap ? buffers.back().snapshot() : std::vector<uint8_t>{});
    changed_on_device.push_back(-1);
  }
}

std::vector<uint8_t*> CallImages::buffer_data() {
  std::vector<uint8_t*> v;
  for (auto& b : buffers) v.push_back(b.data());
  return v;
}

void CallImages::finish(const CallSpec& s, CallOutcome& o) const {
  o.out.resize(s.out_elems);
  if (s.out_elems) copy_bytes(o.out.data(), out.elems(), s.out_elems * 2);
  o.guard_writes = out.guard_writes();
  o.inputs_intact = true;
  o.modified.clear();
  for (size_t k = 0; k < buffers.size(); ++k) {
    if (before[k].empty() && buffers[k].size_bytes() > 0) {
      if (changed_on_device[k] < 0)
        throw std::logic_error("audit: input image " + std::to_string(k) + " has no snapshot and its runner did not "
                               "say whether the call changed it");
      if (changed_on_device[k] == 0) continue;
    } else if (buffers[k].equals(before[k])) {
      continue;
    }
    o.inputs_intact = false;
    o.modified += (o.modified.empty() ? "" : ", ") + (k < s.buffer_names.size() ? s.buffer_names[k] : "buffer " + std::to_string(k));
  }
}

std::vector<CallImages> images_of(const std::vector<CallSpec>& specs) {
  std::vector<CallImages> images;
  images.reserve(specs.size());  // the images' memory stays where it is: the calls' pointers point into it
  for (const auto& s : specs) images.emplace_back(s);
  return images;
}

CallOutcome ImageRunner::call(const CallSpec& s) {
  CallOutcome o;
  if (const std::string why = inexpressible(s); !why.empty()) {
    o.rc = 1;
    o.not_applicable = true;
    o.message = why;
    o.out.assign(s.out_elems, kPoison);
    return o;
  }
  const PhaseClock images_clock("guarded images");  // what run()'s own phases leave: the images and their checks
  CallImages im(s, snapshot_from());
  o.fault = run(s, im, &o);
  if (o.fault.empty()) im.finish(s, o);
  return o;
}

void fill_counter_buffers(const LargeSpec& s, std::vector<uint16_t*>& buffers) {
  const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
  for (size_t k = 0; k < buffers.size(); ++k) {
    uint16_t* p = buffers[k];
    const uint64_t seed = s.buffer_seed(int(k));
    parallel_for(s.buffer_elems(int(k)), [&](unsigned, size_t lo, size_t hi) {
      counter_run(bf16, seed, lo, hi - lo, p + lo);
    }, size_t(1) << 16);
  }
}

uint64_t count_counter_changes(const LargeSpec& s, const std::vector<const uint16_t*>& buffers) {
  const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
  uint64_t total = 0;
  for (size_t k = 0; k < buffers.size(); ++k) {
    const uint16_t* p = buffers[k];
    const uint64_t seed = s.buffer_seed(int(k));
    const unsigned workers = worker_count();
    std::vector<uint64_t> changed(workers, 0);
    parallel_for(s.buffer_elems(int(k)), [&](unsigned w, size_t lo, size_t hi) {
      uint64_t c = 0;
      if (bf16)
        for (size_t i = lo; i < hi; ++i) c += p[i] != counter_pattern_of<true>(seed, i);
      else
        for (size_t i = lo; i < hi; ++i) c += p[i] != counter_pattern_of<false>(seed, i);
      changed[w] += c;
    }, size_t(1) << 16, workers);
    for (uint64_t c : changed) total += c;
  }
  return total;
}

std::vector<Throughput> KernelRunner::copy_throughput() {
  constexpr size_t kBytes = size_t(256) << 20;
  std::vector<uint8_t> a(kBytes, 0x5A), b(kBytes, 0);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), kBytes);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return {{"host memcpy, one thread", double(kBytes) / best / 1e9}};
}

std::vector<Throughput> hash_throughput() {
  constexpr size_t kBytes = size_t(64) << 20;
  const std::vector<uint8_t> data(kBytes, 0xA5);
  const auto rate = [&](unsigned threads) {
    const auto t0 = std::chrono::steady_clock::now();
    run_workers(threads, [&](unsigned) { (void)Sha256::of(data.data(), data.size()); });
    return double(kBytes) * threads / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9;
  };
  const unsigned all = worker_count();
  return {{"SHA-256, one thread", rate(1)}, {"SHA-256, " + std::to_string(all) + " threads", rate(all)}};
}

std::string host_cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs)";
}

}  // namespace fuseproof::audit
