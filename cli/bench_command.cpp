// bench_command.cpp: `fuseproof bench`: per shape, dtype, vector policy and GELU math, the fused kernel's median time
// next to a same-run device-to-device copy and eager libtorch, each result checked bit-exact against eager first.
#include "cli/bench_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "kernels/bias_gelu_tanh_launcher.h"
#include "kernels/cuda_device.h"

#if FUSEPROOF_HAVE_CUDA && FUSEPROOF_HAVE_TORCH
#define FUSEPROOF_BENCH_CUDA 1
#include <cuda_runtime.h>
#include <torch/torch.h>
#include <torch/version.h>
#else
#define FUSEPROOF_BENCH_CUDA 0
#endif

namespace fuseproof::cli {
namespace {

struct Shape {
  std::string name;
  int64_t rows, width;
};

/// The issue's shapes: Wan2.2-A14B 720p 81 frames (75,600 tokens) through the FFN width, then smaller ones.
const std::vector<Shape>& all_shapes() {
  static const std::vector<Shape> shapes = {
      {"wan720p81f", 75600, 13824}, {"32760x13824", 32760, 13824}, {"32760x5120", 32760, 5120},
      {"4096x13824", 4096, 13824},  {"256x13824", 256, 13824},
  };
  return shapes;
}

/// Shapes at or below this many rows are also timed under CUDA-graph replay.
constexpr int64_t kGraphMaxRows = 4096;

struct BenchArgs {
  std::string backend = "cuda";
  std::vector<std::string> shapes;  ///< names from all_shapes() or RxW; empty = all
  std::vector<std::string> dtypes = {"bf16", "fp16"};
  std::vector<int> vectors = {16, 32};
  std::vector<std::string> maths = {"direct", "table", "table-compact", "table-compact-1b"};
  int reps = 30;
  int warmup = 3;
  int graph_launches = 20;
  int graph_reps = 10;
  int64_t emulated_rows = 32;
  std::string json, markdown;
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<Shape> selected_shapes(const BenchArgs& a) {
  if (a.shapes.empty()) return all_shapes();
  std::vector<Shape> out;
  for (const std::string& s : a.shapes) {
    const auto it = std::find_if(all_shapes().begin(), all_shapes().end(), [&](const Shape& k) { return k.name == s; });
    if (it != all_shapes().end()) {
      out.push_back(*it);
      continue;
    }
    const size_t x = s.find('x');
    try {
      size_t used = 0;
      const int64_t r = x == std::string::npos ? 0 : std::stoll(s.substr(0, x), &used);
      const int64_t w = x == std::string::npos ? 0 : std::stoll(s.substr(x + 1));
      if (r <= 0 || w <= 0) throw std::invalid_argument("");
      out.push_back({s, r, w});
    } catch (const std::exception&) {
      throw std::runtime_error("bench: --shapes entries must be a known name or ROWSxWIDTH, got " + s);
    }
  }
  return out;
}

GeluMath math_of(const std::string& m) {
  GeluMath g = GeluMath::kDirect;
  if (!gelu_math_from_name(m, &g)) throw std::runtime_error("bench: --maths entries must be a GeluMath name, got " + m);
  return g;
}
ScalarType dtype_of(const std::string& d) { return d == "fp16" ? ScalarType::kFp16 : ScalarType::kBf16; }

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string read_first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

/// One result row; times in microseconds, NaN where not measured.
struct Row {
  std::string shape, dtype, math;
  int64_t rows = 0, width = 0;
  int vector = 16;
  double fused_us = NAN, fused_gbs = NAN, copy_us = NAN, copy_gbs = NAN, fraction = NAN, eager_us = NAN,
         speedup = NAN;
  double graph_pdl_us = NAN, graph_nopdl_us = NAN, graph_copy_us = NAN;
  bool exact = false;
  int64_t mismatches = -1;
  std::string note;
};

nlohmann::json row_json(const Row& r) {
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"shape", r.shape},
          {"rows", r.rows},
          {"width", r.width},
          {"dtype", r.dtype},
          {"vector_bytes", r.vector},
          {"math", r.math},
          {"exact", r.exact},
          {"mismatches", r.mismatches},
          {"fused_us", num(r.fused_us)},
          {"fused_GBps", num(r.fused_gbs)},
          {"copy_us", num(r.copy_us)},
          {"copy_GBps", num(r.copy_gbs)},
          {"fused_over_copy", num(r.fraction)},
          {"eager_us", num(r.eager_us)},
          {"speedup_vs_eager", num(r.speedup)},
          {"graph_fused_pdl_us", num(r.graph_pdl_us)},
          {"graph_fused_nopdl_us", num(r.graph_nopdl_us)},
          {"graph_copy_us", num(r.graph_copy_us)},
          {"note", r.note}};
}

struct Report {
  nlohmann::json machine;
  nlohmann::json settings;
  std::vector<Row> rows;
  std::string backend;
};

void print_table(const Report& rep) {
  std::printf("\n%-12s %-5s %3s %-16s %10s %9s %10s %9s %8s %10s %8s %9s %9s %9s  %s\n", "shape", "dtype", "vec", "math",
              "fused_us", "GB/s", "copy_us", "copyGB/s", "f/copy", "eager_us", "xeager", "g_pdl_us", "g_nopdl", "g_copy",
              "exact");
  for (const Row& r : rep.rows) {
    std::printf("%-12s %-5s %3d %-16s %10s %9s %10s %9s %8s %10s %8s %9s %9s %9s  %s%s%s\n", r.shape.c_str(),
                r.dtype.c_str(), r.vector, r.math.c_str(), fmt("%.2f", r.fused_us).c_str(),
                fmt("%.0f", r.fused_gbs).c_str(), fmt("%.2f", r.copy_us).c_str(), fmt("%.0f", r.copy_gbs).c_str(),
                fmt("%.3f", r.fraction).c_str(), fmt("%.2f", r.eager_us).c_str(), fmt("%.2f", r.speedup).c_str(),
                fmt("%.2f", r.graph_pdl_us).c_str(), fmt("%.2f", r.graph_nopdl_us).c_str(),
                fmt("%.2f", r.graph_copy_us).c_str(), r.exact ? "exact" : "NOT EXACT",
                r.note.empty() ? "" : " ", r.note.c_str());
  }
  std::fflush(stdout);
}

/// Replaces `path` with `text` atomically (common/atomic_file.h); `option` names the flag in the one-line error.
void write_report(const std::string& option, const std::string& path, const std::string& text) {
  try {
    write_file_atomically(path, text);
  } catch (const std::exception& e) {
    throw std::runtime_error("bench: " + option + ": " + e.what());
  }
}

void write_json(const Report& rep, const std::string& path) {
  nlohmann::json j = {{"backend", rep.backend}, {"machine", rep.machine}, {"settings", rep.settings}};
  j["results"] = nlohmann::json::array();
  for (const Row& r : rep.rows) j["results"].push_back(row_json(r));
  write_report("--json", path, j.dump(2) + "\n");
}

void render_markdown(const Report& rep, std::ostream& f) {
  f << "<!-- written by `fuseproof bench` -->\n\n| machine | |\n|---|---|\n";
  for (auto it = rep.machine.begin(); it != rep.machine.end(); ++it)
    f << "| " << it.key() << " | " << (it.value().is_string() ? it.value().get<std::string>() : it.value().dump())
      << " |\n";
  f << "| settings | `" << rep.settings.dump() << "` |\n\n";
  if (rep.backend == "emulated") {
    f << "| shape | dtype | vector | math | Melem/s | ms per launch | note |\n|---|---|---|---|---|---|---|\n";
    for (const Row& r : rep.rows)
      f << "| " << r.rows << " x " << r.width << " | " << r.dtype << " | " << r.vector << " | " << r.math << " | "
        << fmt("%.1f", r.fused_gbs) << " | " << fmt("%.2f", r.fused_us / 1000) << " | " << r.note << " |\n";
    return;
  }
  f << "| shape | dtype | vector | math | exact | fused/copy | x eager | fused us | fused GB/s | copy us | copy GB/s | "
       "eager us | graph fused PDL us | graph fused no-PDL us | graph copy us |\n"
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rep.rows)
    f << "| " << r.shape << " (" << r.rows << " x " << r.width << ") | " << r.dtype << " | " << r.vector << " | "
      << r.math << " | " << (r.exact ? "yes" : "**NOT EXACT**") << " | " << fmt("%.3f", r.fraction) << " | "
      << fmt("%.2f", r.speedup) << " | " << fmt("%.2f", r.fused_us) << " | " << fmt("%.0f", r.fused_gbs) << " | "
      << fmt("%.2f", r.copy_us) << " | " << fmt("%.0f", r.copy_gbs) << " | " << fmt("%.2f", r.eager_us) << " | "
      << fmt("%.2f", r.graph_pdl_us) << " | " << fmt("%.2f", r.graph_nopdl_us) << " | " << fmt("%.2f", r.graph_copy_us)
      << " |\n";
}

// ------------------------------------------------------------------------------------------------ CPU emulation
/// n uint16 on a 64-byte boundary (std::vector alone promises less than the 32-byte vectors need).
class AlignedHalfs {
 public:
  explicit AlignedHalfs(size_t n) : store_(n + 32), n_(n) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(store_.data());
    p_ = store_.data() + ((64 - a % 64) % 64) / 2;
  }
  uint16_t* data() { return p_; }
  size_t size() const { return n_; }
  uint16_t& operator[](size_t i) { return p_[i]; }

 private:
  std::vector<uint16_t> store_;
  size_t n_;
  uint16_t* p_;
};

/// Elements per second of the CPU emulation (single host thread, as the launcher runs it) on production widths.
int run_emulated(const BenchArgs& a, Report& rep) {
  rep.backend = "emulated";
  rep.machine = {{"date", utc_now()}, {"cpu", "unknown"}, {"hardware_threads", std::thread::hardware_concurrency()}};
  {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("model name", 0) == 0) {
        rep.machine["cpu"] = line.substr(line.find(':') + 2);
        break;
      }
  }
  rep.settings = {{"rows", a.emulated_rows}, {"reps", std::min(a.reps, 5)}};
  for (const std::string& dt : a.dtypes) {
    const ScalarType t = dtype_of(dt);
    for (const Shape& s0 : selected_shapes(a)) {
      const int64_t rows = std::min(s0.rows, a.emulated_rows);
      const Shape s{std::to_string(rows) + "x" + std::to_string(s0.width), rows, s0.width};
      const size_t n = size_t(s.rows * s.width);
      AlignedHalfs x(n), bias(size_t(s.width)), out(n);
      std::vector<uint16_t> first(n);
      uint64_t st = 0x9E3779B97F4A7C15ull;
      auto next = [&] {  // splitmix64: any 16-bit pattern (NaN, Inf and subnormals included)
        st += 0x9E3779B97F4A7C15ull;
        uint64_t z = st;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
      };
      for (size_t i = 0; i < n; ++i) x[i] = uint16_t(next());
      for (size_t i = 0; i < bias.size(); ++i) bias[i] = uint16_t(next());
      bool have_first = false;
      for (int vb : a.vectors)
        for (const std::string& m : a.maths) {
          BiasGeluOptions opt;
          opt.vector = static_cast<VectorPolicy>(vb);
          opt.math = math_of(m);
          std::vector<double> secs;
          for (int r = 0; r < std::max(1, std::min(a.reps, 5)); ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            const LaunchStatus ls = bias_gelu_tanh(contiguous_view(out.data(), t, {s.rows, s.width}),
                                                   contiguous_view(x.data(), t, {s.rows, s.width}),
                                                   contiguous_view(bias.data(), t, {s.width}), opt);
            if (!ls.ok) throw std::runtime_error(ls.message);
            secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          }
          Row row;
          row.shape = s.name;
          row.rows = s.rows;
          row.width = s.width;
          row.dtype = dt;
          row.vector = vb;
          row.math = m;
          const double best = *std::min_element(secs.begin(), secs.end());
          row.fused_us = best * 1e6;
          row.fused_gbs = double(s.rows * s.width) / best / 1e6;  // Melem/s in this mode
          if (!have_first) {
            first.assign(out.data(), out.data() + n);
            have_first = true;
            row.exact = true;
            row.note = "first variant (others compared with it)";
          } else {
            row.mismatches = 0;
            for (size_t i = 0; i < n; ++i) row.mismatches += out[i] != first[i];
            row.exact = row.mismatches == 0;
          }
          rep.rows.push_back(row);
          std::printf("emulated %s %s %d-byte %s: %.1f Melem/s (best of %zu, %.2f ms)\n", s.name.c_str(), dt.c_str(),
                      vb, m.c_str(), row.fused_gbs, secs.size(), best * 1e3);
        }
    }
  }
  return 0;
}

#if FUSEPROOF_BENCH_CUDA
// ------------------------------------------------------------------------------------------------ CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("bench: ") + what + " failed: " + cudaGetErrorName(e));
}

/// Holds the stream in a host function until everything to be timed is queued, so that the host-side cost of
/// validation and launch never shows up between a start and a stop event (a 2-second bound keeps it from hanging).
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t s) {
    check(cudaLaunchHostFunc(s, &StreamGate::wait, flag_.get()), "cudaLaunchHostFunc");
  }
  ~StreamGate() { open(); }
  void open() { flag_->store(true); }

 private:
  static void wait(void* p) {
    auto* f = static_cast<std::atomic<bool>*>(p);
    const auto t0 = std::chrono::steady_clock::now();
    while (!f->load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) std::this_thread::yield();
  }
  std::shared_ptr<std::atomic<bool>> flag_ = std::make_shared<std::atomic<bool>>(false);
};

/// Per-rep event pairs on one stream; medians in microseconds.
class RepTimer {
 public:
  RepTimer(cudaStream_t s, int reps) : s_(s), ev_(size_t(2 * reps)) {
    for (auto& e : ev_) check(cudaEventCreate(&e), "cudaEventCreate");
  }
  ~RepTimer() {
    for (auto& e : ev_) cudaEventDestroy(e);
  }
  void start(int i) { check(cudaEventRecord(ev_[size_t(2 * i)], s_), "cudaEventRecord"); }
  void stop(int i) { check(cudaEventRecord(ev_[size_t(2 * i + 1)], s_), "cudaEventRecord"); }
  double median_us() {
    check(cudaEventSynchronize(ev_.back()), "cudaEventSynchronize");
    std::vector<double> t;
    for (size_t i = 0; i + 1 < ev_.size(); i += 2) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, ev_[i], ev_[i + 1]), "cudaEventElapsedTime");
      t.push_back(double(ms) * 1e3);
    }
    return median(t);
  }

 private:
  cudaStream_t s_;
  std::vector<cudaEvent_t> ev_;
};

/// Times `op(i)` for i < reps (the gate holds the stream while they are queued); median per op in microseconds.
template <class Op>
double time_reps(cudaStream_t s, int reps, Op op) {
  RepTimer timer(s, reps);
  StreamGate gate(s);
  for (int i = 0; i < reps; ++i) {
    timer.start(i);
    op(i);
    timer.stop(i);
  }
  gate.open();
  return timer.median_us();
}

/// Captures `launches` calls of op(i) on stream s into a graph, replays it `reps` times; median per launch in us.
template <class Op>
double time_graph(cudaStream_t s, int launches, int reps, Op op) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (int i = 0; i < launches; ++i) op(i);
  check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");  // warm-up
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  const double us = time_reps(s, reps, [&](int) { check(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return us / launches;
}

nlohmann::json cuda_machine() {
  int dev = 0, drv = 0, rt = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::string driver = read_first_line("/proc/driver/nvidia/version");
  const size_t k = driver.find("Kernel Module");
  if (k != std::string::npos) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>": the first token after the words.
    // The open module says "Kernel Module for x86_64  580.159.04": take the first dotted number after the words.
    std::smatch m;
    const std::string rest = driver.substr(k);
    driver = std::regex_search(rest, m, std::regex(R"(\b(\d+\.\d+(\.\d+)?)\b)")) ? m[1].str() : "";
  }
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
          {"torch", TORCH_VERSION},
          {"kernels_built_for", cuda_built_architectures()}};
}

/// Elements of a and b whose encodings differ (compared as int16 on the device).
int64_t count_differences(const torch::Tensor& a, const torch::Tensor& b) {
  return a.view(torch::kInt16).ne(b.view(torch::kInt16)).sum().item<int64_t>();
}

int run_cuda(const BenchArgs& a, Report& rep) {
  rep.backend = "cuda";
  if (cuda_device_count() == 0 || !torch::cuda::is_available()) {
    std::fprintf(stderr, "fuseproof bench: --backend cuda needs a CUDA device visible to both the CUDA runtime and "
                         "libtorch, got none\n");
    return 2;
  }
  rep.machine = cuda_machine();
  rep.settings = {{"reps", a.reps}, {"warmup", a.warmup}, {"graph_launches", a.graph_launches},
                  {"graph_reps", a.graph_reps}};
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  cudaStream_t s = nullptr;  // the legacy default stream: libtorch's default stream, so eager queues on it too
  cudaStream_t gs = nullptr;  // graph capture needs a stream of its own
  check(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking), "cudaStreamCreate");
  std::printf("bench on %s (sm_%s, driver %s, CUDA runtime %s, torch %s)\n",
              rep.machine["gpu"].get<std::string>().c_str(), rep.machine["sm"].get<std::string>().c_str(),
              rep.machine["driver"].get<std::string>().c_str(), rep.machine["cuda_runtime"].get<std::string>().c_str(),
              TORCH_VERSION);
  int status = 0;
  for (const Shape& shape : selected_shapes(a)) {
    for (const std::string& dt : a.dtypes) {
      const ScalarType t = dtype_of(dt);
      const auto tt = t == ScalarType::kBf16 ? torch::kBFloat16 : torch::kHalf;
      const auto opts = torch::TensorOptions().dtype(tt).device(torch::kCUDA, 0);
      const int64_t n = shape.rows * shape.width;
      const int64_t bytes = n * 2;
      // Enough input/output sets that one rotation touches more than three L2s: no rep finds its data cached.
      const int sets = int(std::min<int64_t>(16, std::max<int64_t>(1, (3 * int64_t(l2)) / (2 * bytes) + 1)));
      torch::manual_seed(1234);
      std::vector<torch::Tensor> xs, outs, eager_ref;
      for (int i = 0; i < sets; ++i) {
        xs.push_back(torch::randn({shape.rows, shape.width}, opts));
        outs.push_back(torch::empty({shape.rows, shape.width}, opts));
      }
      const torch::Tensor bias = torch::randn({shape.width}, opts);
      for (int i = 0; i < sets; ++i) eager_ref.push_back(torch::gelu(xs[size_t(i)] + bias, "tanh"));
      check(cudaDeviceSynchronize(), "inputs");

      // Eager, once per shape and dtype.
      for (int i = 0; i < a.warmup; ++i) (void)torch::gelu(xs[size_t(i % sets)] + bias, "tanh");
      const double eager_us = time_reps(s, a.reps, [&](int i) { (void)torch::gelu(xs[size_t(i % sets)] + bias, "tanh"); });

      for (int vb : a.vectors) {
        for (const std::string& m : a.maths) {
          Row row;
          row.shape = shape.name;
          row.rows = shape.rows;
          row.width = shape.width;
          row.dtype = dt;
          row.vector = vb;
          row.math = m;
          row.eager_us = eager_us;
          BiasGeluOptions opt;
          opt.vector = static_cast<VectorPolicy>(vb);
          opt.math = math_of(m);
          opt.stream = s;
          opt.pdl = true;
          auto launch = [&](int i, void* stream, bool pdl) {
            BiasGeluOptions o = opt;
            o.stream = stream;
            o.pdl = pdl;
            const size_t k = size_t(i % sets);
            const LaunchStatus st = bias_gelu_tanh(contiguous_view(outs[k].data_ptr(), t, {shape.rows, shape.width},
                                                                   {DeviceKind::kCuda, 0}),
                                                   contiguous_view(xs[k].data_ptr(), t, {shape.rows, shape.width},
                                                                   {DeviceKind::kCuda, 0}),
                                                   contiguous_view(bias.data_ptr(), t, {shape.width},
                                                                   {DeviceKind::kCuda, 0}),
                                                   o);
            if (!st.ok) throw std::runtime_error(st.message);
          };
          try {
            // Poison every output, so that only this variant's writes can pass the check below.
            for (auto& o : outs) check(cudaMemsetAsync(o.data_ptr(), 0xFF, size_t(bytes), s), "cudaMemsetAsync");
            for (int i = 0; i < std::max(a.warmup, sets); ++i) launch(i, s, true);
            row.fused_us = time_reps(s, a.reps, [&](int i) { launch(i, s, true); });
            check(cudaDeviceSynchronize(), "fused");
            row.mismatches = 0;
            for (int i = 0; i < sets; ++i) row.mismatches += count_differences(outs[size_t(i)], eager_ref[size_t(i)]);
            row.exact = row.mismatches == 0;
            // Same-run copy of the same bytes, right after the fused reps.
            for (int i = 0; i < a.warmup; ++i)
              check(cudaMemcpyAsync(outs[size_t(i % sets)].data_ptr(), xs[size_t(i % sets)].data_ptr(), size_t(bytes),
                                    cudaMemcpyDeviceToDevice, s),
                    "cudaMemcpyAsync");
            row.copy_us = time_reps(s, a.reps, [&](int i) {
              check(cudaMemcpyAsync(outs[size_t(i % sets)].data_ptr(), xs[size_t(i % sets)].data_ptr(), size_t(bytes),
                                    cudaMemcpyDeviceToDevice, s),
                    "cudaMemcpyAsync");
            });
            if (shape.rows <= kGraphMaxRows && a.graph_launches > 0) {
              row.graph_pdl_us = time_graph(gs, a.graph_launches, a.graph_reps, [&](int i) { launch(i, gs, true); });
              row.graph_nopdl_us = time_graph(gs, a.graph_launches, a.graph_reps, [&](int i) { launch(i, gs, false); });
              row.graph_copy_us = time_graph(gs, a.graph_launches, a.graph_reps, [&](int i) {
                check(cudaMemcpyAsync(outs[size_t(i % sets)].data_ptr(), xs[size_t(i % sets)].data_ptr(),
                                      size_t(bytes), cudaMemcpyDeviceToDevice, gs),
                      "cudaMemcpyAsync");
              });
              // The graph replays wrote the outputs again: they must still be exact.
              check(cudaDeviceSynchronize(), "graphs");
              int64_t again = 0;
              for (auto& o : outs) check(cudaMemsetAsync(o.data_ptr(), 0xFF, size_t(bytes), gs), "cudaMemsetAsync");
              time_graph(gs, std::max(a.graph_launches, sets), 1, [&](int i) { launch(i, gs, true); });
              for (int i = 0; i < sets; ++i) again += count_differences(outs[size_t(i)], eager_ref[size_t(i)]);
              row.mismatches += again;
              row.exact = row.mismatches == 0;
            }
          } catch (const std::exception& e) {
            row.exact = false;
            row.note = e.what();
            cudaGetLastError();
          }
          row.fused_gbs = double(2 * bytes + shape.width * 2) / (row.fused_us * 1e3);
          row.copy_gbs = double(2 * bytes) / (row.copy_us * 1e3);
          row.fraction = row.copy_us / row.fused_us;
          row.speedup = row.eager_us / row.fused_us;
          if (!row.exact) {
            // A variant that is not exact is not a result: keep the row, drop its numbers.
            if (row.note.empty()) row.note = std::to_string(row.mismatches) + " elements differ from eager";
            row.fused_gbs = row.fraction = row.speedup = NAN;
            status = 1;
          }
          std::printf("%s %s %d-byte %s: fused %.2f us, copy %.2f us (%.3f of copy), eager %.2f us (x%.2f)%s%s\n",
                      shape.name.c_str(), dt.c_str(), vb, m.c_str(), row.fused_us, row.copy_us, row.fraction,
                      row.eager_us, row.speedup, row.exact ? "" : ", NOT EXACT: ", row.note.c_str());
          std::fflush(stdout);
          rep.rows.push_back(row);
        }
      }
      xs.clear();
      outs.clear();
      eager_ref.clear();
    }
  }
  cudaStreamDestroy(gs);
  return status;
}
#endif

int run(const BenchArgs& a) {
  Report rep;
  int status = 0;
  if (a.backend == "emulated") {
    status = run_emulated(a, rep);
  } else {
#if FUSEPROOF_BENCH_CUDA
    status = run_cuda(a, rep);
    if (status == 2) return 2;
#else
    std::fprintf(stderr, "fuseproof bench: --backend cuda needs a build with CUDA and libtorch, this one has CUDA=%s "
                         "libtorch=%s\n",
                 FUSEPROOF_HAVE_CUDA ? "on" : "off", FUSEPROOF_HAVE_TORCH ? "on" : "off");
    return 2;
#endif
  }
  print_table(rep);
  if (!a.json.empty()) write_json(rep, a.json);
  if (!a.markdown.empty()) {
    std::ostringstream md;
    render_markdown(rep, md);
    write_report("--markdown", a.markdown, md.str());
  }
  return status;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Fused kernel vs same-run device copy and eager libtorch (median of CUDA-event reps, exactness first)");
  cmd->add_option("--backend", a->backend, "cuda, or emulated (the CPU emulation's throughput)")
      ->check(CLI::IsMember({"cuda", "emulated"}))
      ->capture_default_str();
  cmd->add_option("--shapes", a->shapes,
                  "shape names (wan720p81f 32760x13824 32760x5120 4096x13824 256x13824) or ROWSxWIDTH; default all");
  cmd->add_option("--dtypes", a->dtypes, "bf16 and/or fp16")->check(CLI::IsMember({"bf16", "fp16"}))->capture_default_str();
  cmd->add_option("--vectors", a->vectors, "vector bytes: 16 and/or 32")->check(CLI::IsMember(std::vector<int>{16, 32}))->capture_default_str();
  cmd->add_option("--maths", a->maths, "any of direct, table, table-compact, table-compact-1b")
      ->check(CLI::IsMember({"direct", "table", "table-compact", "table-compact-1b"}))
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "timed reps per measurement")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "untimed launches first")->check(CLI::Range(0, 100))->capture_default_str();
  cmd->add_option("--graph-launches", a->graph_launches, "launches captured per graph (0: no graph timing)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--graph-reps", a->graph_reps, "graph replays timed")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--emulated-rows", a->emulated_rows, "rows per shape for --backend emulated")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20))
      ->capture_default_str();
  cmd->add_option("--json", a->json, "write the results as JSON");
  cmd->add_option("--markdown", a->markdown, "write the results as a Markdown table");
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
