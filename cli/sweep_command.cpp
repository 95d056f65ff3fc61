// sweep_command.cpp: `fuseproof sweep --op OP --dtype D --backend B [--against B2|golden]`.
#include "cli/sweep_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>

#include "audit/golden_store.h"
#include "cli/reference_options.h"
#include "cli/torch_cpu_backend.h"
#include "common/atomic_file.h"
#include "common/progress_line.h"
#include "common/sha256.h"
#include "reference/domain_sweep.h"
#include "reference/gelu_table.h"

namespace fuseproof::cli {

using audit::default_golden_dir;
using audit::golden_digest;

namespace {

constexpr size_t kRowBytes = 65536 * 2;

struct SweepArgs {
  std::string op = "bias_gelu_tanh";
  std::string dtype;
  std::string backend = "reference";
  std::string against;
  std::string golden_dir = default_golden_dir();
  std::string arch = "sm_90";
  std::string out;
  unsigned threads = 0;
  uint32_t bias_first = 0;
  uint32_t bias_count = 65536;
  size_t max_records = 8;
  ReferenceOptions ref_opts;
};

int run(SweepArgs& a) {
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  const SweepOp op = a.op == "add_round" ? SweepOp::kAddRound : SweepOp::kBiasGeluTanh;
  if (uint64_t(a.bias_first) + a.bias_count > 65536 || a.bias_count == 0)
    throw std::runtime_error("sweep: --biases must lie within 0..65535 and be non-empty, got " +
                             std::to_string(a.bias_first) + "+" + std::to_string(a.bias_count));
  if (a.against == a.backend) throw std::runtime_error("sweep: --against must differ from --backend, got " + a.against);
  // --out is written beside itself and renamed when complete: a killed sweep leaves the previous file intact.
  std::optional<AtomicFile> out;
  if (!a.out.empty()) {
    try {
      out.emplace(a.out);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("sweep: --out: ") + e.what());
    }
  }
  std::optional<std::string> want_digest;
  if (a.against == "golden") {
    if (a.bias_first != 0 || a.bias_count != 65536)
      throw std::runtime_error("sweep: --against golden needs the whole domain (no --biases)");
    want_digest = golden_digest(a.golden_dir, a.arch, a.op, d);
    if (!want_digest) {
      std::printf("golden/%s: no %s %s digest captured for this architecture (missing, not a failure)\n", a.arch.c_str(),
                  a.op.c_str(), a.dtype.c_str());
      return 3;
    }
  }
  // The reference's GELU is tabulated once: after the rounding boundary its input is one of 65,536 patterns.
  std::vector<uint16_t> table;
  const bool uses_reference = a.backend == "reference" || a.against == "reference";
  ref::GeluConfig cfg;
  if (uses_reference) {
    cfg = a.ref_opts.resolve();
    if (op == SweepOp::kBiasGeluTanh) table = ref::gelu_tanh_table(d, cfg);
  }
  Sha256 hash;
  ProgressLine progress(stdout, "biases", a.bias_count);
  std::vector<uint16_t> other;
  uint64_t mismatches = 0;
  std::vector<std::string> records;
  auto consume = [&](uint32_t b0, uint32_t n, const uint16_t* rows, const uint16_t* other_rows) {
    hash.update(rows, n * kRowBytes);
    if (out) out->write(rows, size_t(n) * kRowBytes);
    if (other_rows) {
      for (size_t i = 0; i < size_t(n) * 65536; ++i) {
        if (rows[i] == other_rows[i]) continue;
        if (++mismatches <= a.max_records) {
          char line[200];
          std::snprintf(line, sizeof line, "%s %s x=0x%04X b=0x%04X => 0x%04X (%s) expected 0x%04X (%s)", a.op.c_str(),
                        a.dtype.c_str(), unsigned(i % 65536), unsigned(b0 + i / 65536), rows[i], a.backend.c_str(),
                        other_rows[i], a.against.c_str());
          records.push_back(line);
        }
      }
    }
    progress.update(b0 + n - a.bias_first);
  };
  const auto t0 = std::chrono::steady_clock::now();
  const bool other_is_backend = !a.against.empty() && a.against != "golden";
  if (a.backend == "reference") {
    ref::SweepOptions so;
    so.threads = a.threads;
    so.bias_first = a.bias_first;
    so.bias_count = a.bias_count;
    ref::sweep_bias_gelu(d, table, cfg.nan, [&](uint32_t b0, uint32_t n, const uint16_t* rows) {
      if (other_is_backend) {
        other.resize(size_t(n) * 65536);
        torch_cpu_rows(op, d, b0, n, other.data());
      }
      consume(b0, n, rows, other_is_backend ? other.data() : nullptr);
    }, so);
  } else {
    constexpr uint32_t kBlock = 256;
    std::vector<uint16_t> rows;
    for (uint32_t b0 = a.bias_first; b0 < a.bias_first + a.bias_count; b0 += kBlock) {
      const uint32_t n = std::min(kBlock, a.bias_first + a.bias_count - b0);
      rows.resize(size_t(n) * 65536);
      torch_cpu_rows(op, d, b0, n, rows.data());
      if (other_is_backend) {
        other.resize(size_t(n) * 65536);
        for (uint32_t r = 0; r < n; ++r)
          ref::sweep_row(d, table.empty() ? nullptr : table.data(), cfg.nan, uint16_t(b0 + r), other.data() + size_t(r) * 65536);
      }
      consume(b0, n, rows.data(), other_is_backend ? other.data() : nullptr);
    }
  }
  progress.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t cases = uint64_t(a.bias_count) * 65536;
  const std::string digest = hash.hex();
  std::printf("%s %s backend=%s%s: %llu cases in %.2f s, sha256 %s\n", a.op.c_str(), a.dtype.c_str(), a.backend.c_str(),
              a.backend == "reference" ? (" tanh=" + a.ref_opts.tanh + " nan=" + a.ref_opts.nan_policy).c_str() : "",
              (unsigned long long)cases, secs, digest.c_str());
  int rc = 0;
  if (other_is_backend) {
    for (const auto& r : records) std::printf("%s\n", r.c_str());
    if (mismatches > records.size()) std::printf("... and %llu more\n", (unsigned long long)(mismatches - records.size()));
    if (mismatches == 0)
      std::printf("In %llu cases, no errors found in %s %s (%s vs %s).\n", (unsigned long long)cases, a.op.c_str(),
                  a.dtype.c_str(), a.backend.c_str(), a.against.c_str());
    else
      std::printf("In %llu cases, %llu errors found in %s %s (%s vs %s).\n", (unsigned long long)cases,
                  (unsigned long long)mismatches, a.op.c_str(), a.dtype.c_str(), a.backend.c_str(), a.against.c_str());
    rc = mismatches ? 1 : 0;
  } else if (want_digest) {
    const bool same = *want_digest == digest;
    std::printf("golden/%s digest %s: %s\n", a.arch.c_str(), want_digest->c_str(), same ? "equal" : "DIFFERENT");
    rc = same ? 0 : 1;
  }
  if (out) {
    try {
      out->commit();
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("sweep: --out: ") + e.what());
    }
  }
  return rc;
}
}  // namespace

void add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Every (x, bias) pair of the 2^32 domain: digest, and mismatches against another backend or golden");
  cmd->add_option("--op", a->op, "bias_gelu_tanh or add_round")->check(CLI::IsMember({"bias_gelu_tanh", "add_round"}))->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "bf16 or fp16")->required()->check(CLI::IsMember({"bf16", "fp16"}));
  cmd->add_option("--backend", a->backend, "reference or torch-cpu")->check(CLI::IsMember({"reference", "torch-cpu"}))->capture_default_str();
  cmd->add_option("--against", a->against, "compare with: reference, torch-cpu, or golden (the captured digest)")
      ->check(CLI::IsMember({"reference", "torch-cpu", "golden"}));
  cmd->add_option("--golden-dir", a->golden_dir, "golden data root")->capture_default_str()->check(CLI::ExistingDirectory);
  cmd->add_option("--arch", a->arch, "golden architecture")->capture_default_str();
  cmd->add_option("--out", a->out, "write the output stream (2 bytes per case; 8 GiB for the whole domain)");
  cmd->add_option("--threads", a->threads, "reference worker threads (0 = all cores)");
  cmd->add_option("--bias-first", a->bias_first, "first bias pattern (partial sweeps)")->check(CLI::Range(0, 65535));
  cmd->add_option("--bias-count", a->bias_count, "number of bias patterns")->check(CLI::Range(1, 65536));
  cmd->add_option("--max-records", a->max_records, "mismatch records printed before the total")->capture_default_str();
  a->ref_opts.add_to(*cmd);
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
