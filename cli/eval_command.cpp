// eval_command.cpp: the reference evaluated on records (the op's inputs in declared order, one little-endian uint16
// each): how a user reproduces one case or checks a failing one by hand.
#include "cli/eval_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/reference_options.h"
#include "common/atomic_file.h"
#include "common/cli_exit.h"
#include "common/exit_status.h"
#include "common/testfloat_record.h"
#include "reference/op_plan.h"
#include "reference/quant_block.h"
#include "reference/rcp_approx_model.h"

namespace fuseproof::cli {

namespace {

struct EvalArgs {
  std::string op;
  std::string dtype;
  std::string contract;  ///< "" is the op's first contract
  std::string in;
  std::string out;
  bool print = false;
  ReferenceOptions ref_opts;
};

/// The bytes of --in: a regular file of one or more whole `record`-byte records. A folder, a device (/dev/zero reads
/// without end) or an empty file is refused before anything is read or written; `layout` says what one record holds,
/// `short_record(bytes)` what the last, partial one of `bytes` bytes has.
std::string read_records(const std::string& path, size_t record, const std::string& layout,
                         const std::function<std::string(size_t)>& short_record) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw UsageError("eval: cannot read --in " + path + ": " + (ec ? ec.message() : std::string("no such file")));
  if (!std::filesystem::is_regular_file(status))
    throw UsageError("eval: --in " + path + " must be a regular file of records, got a " +
                     (std::filesystem::is_directory(status) ? "directory" : "device, FIFO or socket"));
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw UsageError("eval: cannot read --in " + path + ": " + ec.message());
  if (size == 0)
    throw UsageError("eval: --in " + path + " is empty: it must hold one or more " + std::to_string(record) +
                     "-byte records (" + layout + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("eval: cannot read --in " + path + ": " + std::strerror(errno));
  std::string raw(size_t(size), '\0');
  in.read(raw.data(), std::streamsize(raw.size()));
  if (size_t(in.gcount()) != raw.size())
    throw UsageError("eval: cannot read --in " + path + ": it ended after " + std::to_string(in.gcount()) + " of " +
                     std::to_string(size) + " bytes");
  if (raw.size() % record != 0) {
    // The last record is short: name it (records count from 0, as --print's k=) and what it has.
    const size_t last = raw.size() / record, first_byte = last * record;
    throw UsageError("eval: --in " + path + " holds " + std::to_string(raw.size()) + " bytes, not a whole number of " +
                     std::to_string(record) + "-byte records: record " + std::to_string(last) + " (bytes " +
                     std::to_string(first_byte) + ".." + std::to_string(raw.size() - 1) + ") has " +
                     short_record(raw.size() - first_byte) + " (" + layout + ")");
  }
  return raw;
}

void write_out(const EvalArgs& a, const std::string& bytes) {
  // The printed records are this command's other output: lost, they fail it before --out is written.
  if (a.print)
    if (const std::string lost = flush_standard_output(); !lost.empty())
      throw UsageError("eval: --print: cannot write standard output: " + lost);
  try {
    write_file_atomically(a.out, bytes);
  } catch (const std::exception& e) {
    throw UsageError(std::string("eval: --out: ") + e.what());
  }
}

/// A quantization op: one record per block (each input's block as uint16, then the contract's float32 scalars), one
/// output record per block (a code byte per element, then the scale: one byte, or a float32).
int run_quant(EvalArgs& a, const ref::QuantOpSpec& op) {
  const ref::QuantContractSpec* spec = op.contracts.data();
  if (!a.contract.empty()) {
    const auto c = ref::parse_quant_contract(a.contract);
    spec = c ? op.contract(*c) : nullptr;
    if (!spec) {
      std::string names;
      for (const auto& k : op.contracts)
        names += (names.empty() ? "" : ", ") + std::string(ref::quant_contract_name(k.contract));
      throw UsageError("eval: op " + a.op + " has no contract " + a.contract + " (" + names + ")");
    }
  }
  const char* contract = ref::quant_contract_name(spec->contract);
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  // rcp.approx.ftz.f32 comes from the golden MUFU capture of the architecture (reference/rcp_approx_model.h); without
  // it a contract that needs it is refused, never evaluated with exact division.
  ref::QuantModels models;
  if (ref::needs_rcp_approx(*spec)) {
    ReferenceOptions cuda = a.ref_opts;
    cuda.math = "cuda";
    const ref::MathConfig golden = cuda.resolve();  // throws the golden library's errors (exit 3 or 4)
    const ref::RcpApproxTable* table = &golden.mufu->rcp_table();
    models.rcp_approx = [table](float x) { return ref::rcp_approx_ftz(x, *table); };
  }
  // Only the activation stage of a fused op reads the math model (and its golden MUFU data).
  ref::MathConfig cfg;
  cfg.math = ref::MathModel::kLibm;
  if (!op.activation.family_op.empty()) cfg = a.ref_opts.resolve();
  std::unique_ptr<ref::QuantPlan> made;
  try {
    made = std::make_unique<ref::QuantPlan>(op, spec->contract, d, models, cfg);
  } catch (const std::domain_error& e) {  // the cuda model reached an ex2 argument the golden points lack
    throw MissingDataError(std::string("eval: ") + e.what());
  }
  const ref::QuantPlan& plan = *made;
  const size_t record = size_t(plan.record_bytes()), out_record = size_t(plan.output_bytes());
  std::string layout = op.name + " takes " + std::to_string(op.block_size) + " uint16 values of each input (";
  for (size_t i = 0; i < op.inputs.size(); ++i) layout += (i ? ", " : "") + op.inputs[i].name;
  layout += ")";
  for (const std::string& s : spec->scalars) layout += ", then float32 " + s;
  const std::string raw =
      read_records(a.in, record, layout, [](size_t have) { return std::to_string(have) + " bytes"; });
  const size_t records = raw.size() / record;
  std::string bytes(records * out_record, '\0');
  for (size_t k = 0; k < records; ++k) {
    auto* out = reinterpret_cast<uint8_t*>(bytes.data() + k * out_record);
    plan.eval_record(reinterpret_cast<const uint8_t*>(raw.data() + k * record), out);
    if (a.print) {  // "<op> <dtype> <contract> [k=N] scale=0x.. codes=07 05 ...": the block's output
      std::string line = op.name + " " + ref::dtype_name(d) + " " + contract + " [k=" + std::to_string(k) + "] scale=";
      char b[32];
      if (spec->scale_format != ref::ScaleFormat::kE4m3) {
        uint32_t u = 0;
        for (int i = 0; i < 4; ++i) u |= uint32_t(out[op.block_size + i]) << (8 * i);
        std::snprintf(b, sizeof b, "0x%08X", u);
      } else {
        std::snprintf(b, sizeof b, "0x%02X", out[op.block_size]);
      }
      line += std::string(b) + " codes=";
      for (int e = 0; e < op.block_size; ++e) {
        std::snprintf(b, sizeof b, "%s%02X", e ? " " : "", out[e]);
        line += b;
      }
      std::printf("%s\n", line.c_str());
    }
  }
  write_out(a, bytes);
  std::fprintf(stderr, "eval: %zu records of %s %s, contract %s -> %s\n", records, op.name.c_str(),
               ref::dtype_name(d), contract, a.out.c_str());
  return 0;
}

int run(EvalArgs& a) {
  if (const ref::QuantOpSpec* q = ref::find_quant_op(a.op)) return run_quant(a, *q);
  const ref::OpSpec* op = ref::find_op(a.op);
  if (!op)
    throw UsageError("eval: unknown --op " + a.op + " (" + ref::op_names() + ", " + ref::quant_op_names() + ")");
  if (a.contract.empty()) a.contract = ref::contract_name(op->contracts.front().contract);
  const auto contract = ref::parse_contract(a.contract);
  if (!contract || !op->contract(*contract)) throw UsageError("eval: op " + a.op + " has no contract " + a.contract);
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  const size_t n_in = op->inputs.size(), record = 2 * n_in;
  std::string names_list;
  for (const auto& i : op->inputs) names_list += (names_list.empty() ? "" : ", ") + i.name;
  const std::string layout = op->name + " takes " + std::to_string(n_in) + " uint16 inputs each: " + names_list;
  const std::string raw = read_records(a.in, record, layout, [&](size_t have) {
    return have % 2 ? std::to_string(have) + " bytes"
                    : std::to_string(have / 2) + " of " + std::to_string(n_in) + " inputs";
  });
  const ref::MathConfig cfg = a.ref_opts.resolve();
  std::unique_ptr<ref::OpPlan> made;
  try {
    made = std::make_unique<ref::OpPlan>(*op, *contract, d, cfg);
  } catch (const std::domain_error& e) {  // the cuda model reached an ex2 argument the golden points lack
    throw MissingDataError(std::string("eval: ") + e.what());
  }
  const ref::OpPlan& plan = *made;
  std::vector<std::string> names;
  for (const auto& i : op->inputs) names.push_back(i.name);
  const size_t records = raw.size() / record;
  std::string bytes(records * 2, '\0');
  for (size_t k = 0; k < records; ++k) {
    uint16_t v[ref::kMaxOpInputs];
    for (size_t i = 0; i < n_in; ++i)
      v[i] = uint16_t(uint8_t(raw[k * record + 2 * i]) | (uint8_t(raw[k * record + 2 * i + 1]) << 8));
    const uint16_t y = plan.eval_nodes(v);
    bytes[2 * k] = char(y & 0xFF);
    bytes[2 * k + 1] = char(y >> 8);
    if (a.print) {  // "<op> <dtype> [k=N] gate=0x.. up=0x.. => 0x..": a record's inputs and the reference's output
      std::string line = op->name + " " + ref::dtype_name(d) + " [k=" + std::to_string(k) + "]";
      char b[48];
      for (size_t i = 0; i < n_in; ++i) {
        std::snprintf(b, sizeof b, " %s=0x%04X", names[i].c_str(), v[i]);
        line += b;
      }
      std::snprintf(b, sizeof b, " => 0x%04X", y);
      std::printf("%s%s\n", line.c_str(), b);
    }
  }
  write_out(a, bytes);
  std::fprintf(stderr, "eval: %zu records of %s %s, contract %s, %s -> %s\n", records, op->name.c_str(),
               ref::dtype_name(d), a.contract.c_str(), a.ref_opts.describe().c_str(), a.out.c_str());
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate the reference on records: the op's inputs, one uint16 each");
  cmd->add_option("--op", a->op, "an op of `fuseproof ops`")->required();
  cmd->add_option("--dtype", a->dtype, "bf16 or fp16")->required()->check(CLI::IsMember({"bf16", "fp16"}));
  cmd->add_option("--contract", a->contract,
                  "one of the op's contracts (`fuseproof ops`): eager, fp32, fma; vllm-ref, rcp-approx, te, "
                  "flashinfer-exact, fp8-group, fp8-group-ue8m0. Default: the op's first");
  cmd->add_option("--in", a->in,
                  "records: the op's inputs in declared order ((x, bias), (gate, up), (x, gate, y), (x, scale, shift)), "
                  "little-endian uint16, one after the other; for a quantization op one block of each input, then the "
                  "contract's float32 scalars (NVFP4: the global encode scale)")
      ->required();
  cmd->add_option("--out", a->out, "one little-endian uint16 output per record; for a quantization op a code byte per "
                                    "element, then the block's scale (a byte, or a float32)")->required()->check(output_file_option());
  cmd->add_flag("--print", a->print, "also print one line per record");
  a->ref_opts.add_to(*cmd);
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
