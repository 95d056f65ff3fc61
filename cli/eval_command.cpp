// eval_command.cpp: the reference evaluated on records (the op's inputs in declared order, one little-endian uint16
// each): how a user reproduces one case or checks a failing one by hand.
#include "cli/eval_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

namespace fuseproof::cli {

namespace {

struct EvalArgs {
  std::string op;
  std::string dtype;
  std::string contract = "eager";
  std::string in;
  std::string out;
  bool print = false;
  ReferenceOptions ref_opts;
};

int run(EvalArgs& a) {
  const ref::OpSpec* op = ref::find_op(a.op);
  if (!op) throw UsageError("eval: unknown --op " + a.op + " (" + ref::op_names() + ")");
  const auto contract = ref::parse_contract(a.contract);
  if (!contract || !op->contract(*contract)) throw UsageError("eval: op " + a.op + " has no contract " + a.contract);
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  const size_t n_in = op->inputs.size(), record = 2 * n_in;
  std::string names_list;
  for (const auto& i : op->inputs) names_list += (names_list.empty() ? "" : ", ") + i.name;
  // A regular file of one or more whole records: a folder, a device (/dev/zero reads without end) or an empty file
  // is refused before anything is read or written.
  std::error_code ec;
  const auto status = std::filesystem::status(a.in, ec);
  if (ec || !std::filesystem::exists(status))
    throw UsageError("eval: cannot read --in " + a.in + ": " + (ec ? ec.message() : std::string("no such file")));
  if (!std::filesystem::is_regular_file(status))
    throw UsageError("eval: --in " + a.in + " must be a regular file of records, got a " +
                     (std::filesystem::is_directory(status) ? "directory" : "device, FIFO or socket"));
  const uintmax_t size = std::filesystem::file_size(a.in, ec);
  if (ec) throw UsageError("eval: cannot read --in " + a.in + ": " + ec.message());
  if (size == 0)
    throw UsageError("eval: --in " + a.in + " is empty: it must hold one or more " + std::to_string(record) +
                     "-byte records (" + op->name + " takes " + std::to_string(n_in) + " uint16 inputs each: " +
                     names_list + ")");
  std::ifstream in(a.in, std::ios::binary);
  if (!in) throw UsageError("eval: cannot read --in " + a.in + ": " + std::strerror(errno));
  std::string raw(size_t(size), '\0');
  in.read(raw.data(), std::streamsize(raw.size()));
  if (size_t(in.gcount()) != raw.size())
    throw UsageError("eval: cannot read --in " + a.in + ": it ended after " + std::to_string(in.gcount()) + " of " +
                     std::to_string(size) + " bytes");
  if (raw.size() % record != 0) {
    // The last record is short: name it (records count from 0, as --print's k=) and the inputs it has.
    const size_t last = raw.size() / record, first_byte = last * record;
    throw UsageError("eval: --in " + a.in + " holds " + std::to_string(raw.size()) + " bytes, not a whole number of " +
                     std::to_string(record) + "-byte records: record " + std::to_string(last) + " (bytes " +
                     std::to_string(first_byte) + ".." + std::to_string(raw.size() - 1) + ") has " +
                     (raw.size() % 2 ? std::to_string(raw.size() - first_byte) + " bytes" :
                                       std::to_string((raw.size() - first_byte) / 2) + " of " + std::to_string(n_in) +
                                       " inputs") +
                     " (" + op->name + " takes " + std::to_string(n_in) + " uint16 inputs each: " + names_list + ")");
  }
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
  // The printed records are this command's other output: lost, they fail it before --out is written.
  if (a.print)
    if (const std::string lost = flush_standard_output(); !lost.empty())
      throw UsageError("eval: --print: cannot write standard output: " + lost);
  try {
    write_file_atomically(a.out, bytes);
  } catch (const std::exception& e) {
    throw UsageError(std::string("eval: --out: ") + e.what());
  }
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
  cmd->add_option("--contract", a->contract, "eager, fp32 or fma (the op's contracts: `fuseproof ops`)")
      ->capture_default_str();
  cmd->add_option("--in", a->in,
                  "records: the op's inputs in declared order ((x, bias), (gate, up), (x, gate, y), (x, scale, shift)), "
                  "little-endian uint16, one after the other")
      ->required();
  cmd->add_option("--out", a->out, "one little-endian uint16 output per record")->required()->check(output_file_option());
  cmd->add_flag("--print", a->print, "also print one line per record");
  a->ref_opts.add_to(*cmd);
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
