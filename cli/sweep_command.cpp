// sweep_command.cpp: `fuseproof sweep --op OP --dtype D|all [--contract C] --backend B [--against B2|golden]
// [--digest tree|flat]`: every pair of a 2-input op's 2^32 domain.
#include "cli/sweep_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/reference_options.h"
#include "cli/torch_cpu_backend.h"
#include "common/atomic_file.h"
#include "common/cli_exit.h"
#include "common/domain_sweep.h"
#include "common/exit_status.h"
#include "common/golden_library.h"
#include "common/parallel_for.h"
#include "common/parse_integer.h"
#include "common/progress_line.h"
#include "common/tree_digest.h"
#include "reference/op_plan.h"
#include "reference/op_spec.h"
#include "reference/sweep_row.h"

namespace fuseproof::cli {

namespace {

constexpr size_t kRowBytes = 65536 * 2;
constexpr const char* kAddRound = "add_round";  ///< eager `x + bias` alone: a sweep of its own (golden digests too)

struct SweepArgs {
  std::string op = ref::seed_op().name;
  std::string contract = "eager";
  std::string dtype;
  std::string backend = "reference";
  std::string against;
  std::string out;
  unsigned threads = 0;
  uint32_t bias_first = 0;
  uint32_t bias_count = 65536;
  size_t max_records = 8;
  std::string digest = "auto";
  ReferenceOptions ref_opts;
};

/// Which digest of the 2^32 outputs a run computes (common/tree_digest.h): the tree one parallelises its hashing.
enum class DigestKind { kFlat, kTree };

std::string key_of(const SweepArgs& a) {
  return a.op == kAddRound ? kAddRound : golden_digest_key(a.op, *ref::parse_contract(a.contract));
}

/// --digest auto: tree when checking against golden data that has the tree entry (`<key>_tree`), else flat. An
/// explicit --digest tree against golden data without that entry is INCOMPLETE (MissingDataError, exit 3).
DigestKind choose_digest(const SweepArgs& a, const GoldenArch& g, ref::Dtype d, std::optional<std::string>& tree_want) {
  if (a.digest == "flat") return DigestKind::kFlat;
  if (a.against != "golden") return a.digest == "tree" ? DigestKind::kTree : DigestKind::kFlat;
  tree_want = g.digest(key_of(a) + "_tree", d);
  if (tree_want) return DigestKind::kTree;
  if (a.digest == "tree")
    throw MissingDataError("sweep: --digest tree: " + g.label() + " has no " + key_of(a) + "_tree " +
                           ref::dtype_name(d) + " digest (--digest flat checks the flat one)");
  return DigestKind::kFlat;
}

int run_dtype(SweepArgs& a, ref::Dtype d) {
  const char* dtype = ref::dtype_name(d);
  const std::string key = key_of(a);
  const ref::OpSpec* op = a.op == kAddRound ? nullptr : ref::find_op(a.op);
  const ref::Contract contract = *ref::parse_contract(a.contract);
  const bool against_golden = a.against == "golden";
  std::optional<GoldenArch> golden;
  if (against_golden) golden.emplace(a.ref_opts.golden());
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
  const DigestKind kind = golden ? choose_digest(a, *golden, d, want_digest)
                                 : (a.digest == "tree" ? DigestKind::kTree : DigestKind::kFlat);
  if (golden && kind == DigestKind::kFlat) {
    want_digest = golden->digest(key, d);
    if (!want_digest) {
      std::printf("%s: no %s %s digest captured for this architecture (missing, not a failure)\n",
                  golden->label().c_str(), key.c_str(), dtype);
      std::fflush(stdout);
      std::fprintf(stderr, "sweep: %s must hold a %s %s digest, got none: INCOMPLETE\n", golden->label().c_str(),
                   key.c_str(), dtype);
      return 3;
    }
  }
  // The reference's rows: the op's plan (its tables computed once: after each rounding boundary an input is one of
  // 65,536 patterns), or the add alone.
  std::unique_ptr<ref::OpPlan> plan;
  ref::MathConfig cfg;
  const bool uses_reference = a.backend == "reference" || a.against == "reference";
  if (uses_reference) {
    cfg = a.ref_opts.resolve();
    try {
      if (op) plan = std::make_unique<ref::OpPlan>(*op, contract, d, cfg);
    } catch (const std::domain_error& e) {  // the cuda model reached an ex2 argument the golden points lack
      throw MissingDataError(std::string("sweep: ") + e.what());
    }
  }
  const RowFn reference_row = [&](uint16_t b, uint16_t* row) {
    if (plan) plan->row(b, row);
    else ref::sweep_row(d, nullptr, cfg.nan, b, row);
  };
  DomainDigests digests(kind == DigestKind::kFlat, kind == DigestKind::kTree);
  ProgressLine progress(stdout, "rows", a.bias_count);
  std::vector<uint16_t> other;
  uint64_t mismatches = 0;
  std::vector<std::string> records;
  const std::string in0 = op ? op->inputs[0].name : "x", in1 = op ? op->inputs[1].name : "bias";
  const bool other_is_backend = !a.against.empty() && !against_golden;
  const bool torch_backend = a.backend != "reference";
  // The rows of the other backend for a block, beside the driver's: torch's block at once, the reference's rows on
  // every worker.
  const auto other_rows = [&](uint32_t b0, uint32_t n) {
    other.resize(size_t(n) * 65536);
    if (!torch_backend) return torch_cpu_rows(op, contract, d, b0, n, other.data());
    parallel_items(n, [&](unsigned, size_t r) { reference_row(uint16_t(b0 + r), other.data() + r * 65536); });
  };
  const SweepConsumer consume = [&](uint32_t b0, uint32_t n, const uint16_t* rows) {
    digests.update(rows, n);
    if (out) out->write(rows, size_t(n) * kRowBytes);
    if (other_is_backend) {
      other_rows(b0, n);
      for (size_t i = 0; i < size_t(n) * 65536; ++i) {
        if (rows[i] == other[i]) continue;
        if (++mismatches <= a.max_records) {
          char line[240];
          std::snprintf(line, sizeof line, "%s %s %s=0x%04X %s=0x%04X => 0x%04X (%s) expected 0x%04X (%s)",
                        key.c_str(), dtype, in0.c_str(), unsigned(i % 65536), in1.c_str(), unsigned(b0 + i / 65536),
                        rows[i], a.backend.c_str(), other[i], a.against.c_str());
          records.push_back(line);
        }
      }
    }
    progress.update(b0 + n - a.bias_first);
  };
  const auto t0 = std::chrono::steady_clock::now();
  SweepOptions so;
  so.threads = a.threads;
  so.bias_first = a.bias_first;
  so.bias_count = a.bias_count;
  std::string digest;
  if (!torch_backend && kind == DigestKind::kTree && !other_is_backend && !out) {
    // Nothing needs the ordered stream: rows are computed and hashed by every worker, in any order.
    digest = sweep_tree_digest(reference_row, so);
  } else if (!torch_backend) {
    sweep_domain(reference_row, consume, so);
  } else {
    // libtorch computes a block at once on its own threads: one producer ahead of the consumer.
    so.threads = 1;
    sweep_blocks([&](uint32_t b0, uint32_t n, uint16_t* rows) { torch_cpu_rows(op, contract, d, b0, n, rows); },
                 consume, so);
  }
  progress.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t cases = uint64_t(a.bias_count) * 65536;
  if (digest.empty()) digest = kind == DigestKind::kTree ? digests.tree_hex() : digests.flat_hex();
  const char* kind_name = kind == DigestKind::kTree ? "tree digest" : "sha256";
  std::printf("%s %s backend=%s%s: %llu cases in %.2f s, %s %s\n", key.c_str(), dtype, a.backend.c_str(),
              a.backend == "reference" ? (" " + a.ref_opts.describe()).c_str() : "", (unsigned long long)cases, secs,
              kind_name, digest.c_str());
  int rc = 0;
  if (other_is_backend) {
    for (const auto& r : records) std::printf("%s\n", r.c_str());
    if (mismatches > records.size()) std::printf("... and %llu more\n", (unsigned long long)(mismatches - records.size()));
    if (mismatches == 0)
      std::printf("In %llu cases, no errors found in %s %s (%s vs %s).\n", (unsigned long long)cases, key.c_str(),
                  dtype, a.backend.c_str(), a.against.c_str());
    else
      std::printf("In %llu cases, %llu errors found in %s %s (%s vs %s).\n", (unsigned long long)cases,
                  (unsigned long long)mismatches, key.c_str(), dtype, a.backend.c_str(), a.against.c_str());
    rc = mismatches ? 1 : 0;
  } else if (want_digest) {
    const bool same = *want_digest == digest;
    // The flat line keeps its old wording; the tree one names the digests.json entry it compared with.
    if (kind == DigestKind::kTree)
      std::printf("%s tree digest (%s_tree.%s) %s: %s\n", golden->label().c_str(), key.c_str(), dtype,
                  want_digest->c_str(), same ? "equal" : "DIFFERENT");
    else
      std::printf("%s digest %s: %s\n", golden->label().c_str(), want_digest->c_str(), same ? "equal" : "DIFFERENT");
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

int run(SweepArgs& a) {
  if (a.op != kAddRound) {
    const ref::OpSpec* op = ref::find_op(a.op);
    if (!op) throw UsageError("sweep: unknown --op " + a.op + " (" + ref::op_names() + ", add_round)");
    const auto c = ref::parse_contract(a.contract);
    if (!c || !op->contract(*c)) throw UsageError("sweep: op " + a.op + " has no contract " + a.contract);
    if (op->inputs.size() != 2) throw UsageError("sweep: op " + a.op + " has no 2^32 domain (it takes 3 inputs)");
  } else if (a.contract != "eager") {
    throw UsageError("sweep: add_round has the eager contract only, got " + a.contract);
  }
  if (uint64_t(a.bias_first) + a.bias_count > 65536 || a.bias_count == 0)
    throw UsageError("sweep: --biases must lie within 0..65535 and be non-empty, got " + std::to_string(a.bias_first) +
                     "+" + std::to_string(a.bias_count));
  if (a.against == a.backend) throw UsageError("sweep: --against must differ from --backend, got " + a.against);
  if (a.against == "golden" && (a.bias_first != 0 || a.bias_count != 65536))
    throw UsageError("sweep: --against golden needs the whole domain (no --bias-first, --bias-count)");
  if (a.dtype == "all" && !a.out.empty()) throw UsageError("sweep: --out needs one --dtype, got all");
  std::vector<ref::Dtype> dtypes;
  if (a.dtype == "all") dtypes.assign(std::begin(ref::kAllDtypes), std::end(ref::kAllDtypes));
  else dtypes.push_back(*ref::parse_dtype(a.dtype));
  // --dtype all: every dtype runs; a defect in one (1) outranks missing evidence in another (3).
  int rc = kExitPass;
  for (ref::Dtype d : dtypes) {
    const int r = run_dtype(a, d);
    if (r == kExitFail) rc = kExitFail;
    else if (r != kExitPass && rc == kExitPass) rc = r;
  }
  return rc;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Every pair of a 2-input op's 2^32 domain: digest, and mismatches against another backend or golden");
  cmd->add_option("--op", a->op, "an op of `fuseproof ops`, or add_round (eager x + bias alone)")->capture_default_str();
  cmd->add_option("--contract", a->contract, "the op's contract: eager or fp32")->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "bf16, fp16, or all (one after the other)")->required()
      ->check(CLI::IsMember({"bf16", "fp16", "all"}));
  cmd->add_option("--backend", a->backend, "reference or torch-cpu")->check(CLI::IsMember({"reference", "torch-cpu"}))->capture_default_str();
  cmd->add_option("--against", a->against, "compare with: reference, torch-cpu, or golden (the captured digest)")
      ->check(CLI::IsMember({"reference", "torch-cpu", "golden"}));
  cmd->add_option("--out", a->out, "write the output stream (2 bytes per case; 8 GiB for the whole domain)")->check(output_file_option());
  cmd->add_option("--threads", a->threads, "reference worker threads (0 = all cores)")->check(integer_in<unsigned>(0, 4096));
  cmd->add_option("--bias-first", a->bias_first, "first second-input pattern (partial sweeps)")->check(integer_in<uint32_t>(0, 65535));
  cmd->add_option("--bias-count", a->bias_count, "number of second-input patterns")->check(integer_in<uint32_t>(1, 65536));
  cmd->add_option("--max-records", a->max_records, "mismatch records printed before the total")
      ->check(integer_in<size_t>())
      ->capture_default_str();
  cmd->add_option("--digest", a->digest,
                  "tree (SHA-256 of the per-row digests, hashed in parallel; common/tree_digest.h), flat (one "
                  "SHA-256 stream), or auto: tree against golden data that has it, else flat")
      ->check(CLI::IsMember({"auto", "tree", "flat"}))->capture_default_str();
  a->ref_opts.add_to(*cmd);
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
