// bench_command.cpp: `fuseproof bench`: the options, then bench/'s backend, console table and JSON.
#include "cli/bench_command.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "bench/bench_options.h"
#include "bench/bench_report.h"
#include "bench/bench_shapes.h"
#include "bench/emulated_backend.h"
#include "bench/input_distribution.h"
#include "common/cli_exit.h"
#include "common/parse_integer.h"
#include "reference/op_spec.h"
#if FUSEPROOF_BENCH_CUDA
#include "bench/cuda_backend.h"
#endif

namespace fuseproof::cli {

namespace {

struct BenchArgs {
  bench::BenchOptions options;
  std::string json;
};

int run(const BenchArgs& a) {
  bench::Report rep;
  int status = 0;
  // Every refusal before anything is measured: distributions (names, files, sizes), then plugins.
  std::vector<std::string> notes;
  const std::vector<bench::Distribution> dists = bench::resolve_distributions(a.options, &notes);
  for (const std::string& n : notes) std::printf("bench: %s\n", n.c_str());
  if (dists.empty()) throw std::runtime_error("bench: --dist must leave at least one distribution, got none");
  bench::select_shapes(a.options.shapes);
  const int32_t memory = a.options.backend == "emulated" ? FUSEPROOF_MEMORY_HOST : FUSEPROOF_MEMORY_CUDA;
  std::vector<audit::Plugin> plugins;
  for (const std::string& path : a.options.plugins) {
    try {
      plugins.push_back(audit::Plugin::load(path, ref::seed_op().name));
    } catch (const audit::PluginError& e) {
      std::string m = e.what();  // "audit: plugin PATH ..."
      if (m.rfind("audit: ", 0) == 0) m = m.substr(7);
      throw std::runtime_error("bench: --" + m);
    }
    if (plugins.back().info().memory != memory)
      throw std::runtime_error("bench: --plugin must be a " + std::string(audit::memory_name(memory)) +
                               "-memory plugin for --backend " + a.options.backend + ", got " +
                               audit::memory_name(plugins.back().info().memory) + " " + path);
  }
  if (a.options.backend == "emulated") {
    if (a.options.timing != "alternate")
      throw std::runtime_error("bench: --timing applies to --backend cuda only, got " + a.options.timing +
                               " with --backend emulated");
    if (a.options.pdl != "on")
      throw std::runtime_error("bench: --pdl applies to --backend cuda only, got " + a.options.pdl +
                               " with --backend emulated");
    status = bench::run_emulated(a.options, dists, plugins, rep);
  } else {
#if FUSEPROOF_BENCH_CUDA
    status = bench::run_cuda(a.options, dists, plugins, rep);
    if (status == 2) return 2;
#else
    std::fprintf(stderr, "fuseproof bench: --backend cuda needs a build with CUDA and libtorch, this one has CUDA=%s "
                         "libtorch=%s\n",
                 FUSEPROOF_HAVE_CUDA ? "on" : "off", FUSEPROOF_HAVE_TORCH ? "on" : "off");
    return 2;
#endif
  }
  bench::print_worst_cases(rep);
  bench::print_table(rep);
  if (!a.json.empty()) bench::write_json(rep, a.json);
  return status;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  bench::BenchOptions& o = a->options;
  std::vector<std::string> maths = bench::gelu_math_choices();
  maths.push_back("auto");  // what the launcher picks (kAuto), named in the row by what it resolved to
  std::string math_list;
  for (const auto& m : maths) math_list += (math_list.empty() ? "" : ",") + m;
  CLI::App* cmd = app.add_subcommand(
      "bench", "Fused kernel vs same-run device copy and eager libtorch (median of CUDA-event reps, exactness first)");
  cmd->add_option("--backend", o.backend, "cuda, or emulated (the CPU emulation's throughput)")
      ->check(CLI::IsMember({"cuda", "emulated"}))
      ->capture_default_str();
  cmd->add_option("--shapes", o.shapes,
                  "comma list of shape names (wan720p81f,32760x13824,32760x5120,4096x13824,256x13824) or ROWSxWIDTH; "
                  "default all")
      ->delimiter(',');
  cmd->add_option("--dtypes", o.dtypes, "comma list of bf16, fp16")
      ->delimiter(',')
      ->check(CLI::IsMember({"bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--vectors", o.vectors, "comma list of vector bytes: 16, 32")
      ->delimiter(',')
      ->check(CLI::IsMember(std::vector<int>{16, 32}))
      ->capture_default_str();
  cmd->add_option("--maths", o.maths, "comma list of GELU maths: " + math_list)
      ->delimiter(',')
      ->check(CLI::IsMember(maths))
      ->capture_default_str();
  cmd->add_option("--reps", o.reps, "timed reps per measurement")->check(integer_in<int>(1, 1000))->capture_default_str();
  cmd->add_option("--timing", o.timing,
                  "how fused and copy reps are timed (cuda): alternate (one of each in turn), blocks (every fused rep, "
                  "then every copy rep), after-gemm (alternate, each rep after an untimed GEMM on the same stream)")
      ->check(CLI::IsMember({"alternate", "blocks", "after-gemm"}))
      ->capture_default_str();
  cmd->add_option("--pdl", o.pdl,
                  "on: the built-in kernel's timed reps launch with programmatic dependent launch, as shipped; off: "
                  "without (cuda; plugins launch as they launch)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "untimed launches first")->check(integer_in<int>(0, 100))->capture_default_str();
  cmd->add_option("--graph-launches", o.graph_launches, "launches captured per graph (0: no graph timing)")
      ->check(integer_in<int>(0, 1000))
      ->capture_default_str();
  cmd->add_option("--graph-reps", o.graph_reps, "graph replays timed")->check(integer_in<int>(1, 1000))->capture_default_str();
  cmd->add_option("--emulated-rows", o.emulated_rows, "rows per shape for --backend emulated")
      ->check(integer_in<int64_t>(1, int64_t(1) << 20))
      ->capture_default_str();
  std::string dist_list;
  for (const auto& d : bench::builtin_distribution_names()) dist_list += (dist_list.empty() ? "" : ",") + d;
  cmd->add_option("--dist", o.dists,
                  "comma list of input distributions (x and bias): " + dist_list +
                      "; default all (e2e only with --e2e-capture)")
      ->delimiter(',');
  cmd->add_option("--e2e-capture", o.e2e_capture,
                  "folder of an FFN pre-activation capture (FUSEPROOF_CAPTURE_FFN=DIR fuseproof e2e run ...): the e2e "
                  "distribution");
  cmd->add_option("--input", o.input_file,
                  "raw little-endian 16-bit x patterns (the `file` distribution, cycled to fill each shape; bias from "
                  "the same sample); needs --input-shape");
  cmd->add_option("--input-shape", o.input_shape, "ROWSxWIDTH of --input (its size must match exactly)");
  cmd->add_option("--plugin", o.plugins,
                  "kernel plugin (kernels/fuseproof_kernel_abi.h) timed beside the built-in kernel; repeatable; CUDA "
                  "memory for --backend cuda, host for emulated");
  cmd->add_option("--seed", o.seed, "seed of every generated input")->check(integer_in<uint64_t>())->capture_default_str();
  cmd->add_option("--json", a->json, "write the results as JSON (scripts/perf_table.py renders it as Markdown)")->check(output_file_option());
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
