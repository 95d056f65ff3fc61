// table_command.cpp: `fuseproof table --act A --dtype D [--f32] --out FILE`.
#include "cli/table_command.h"

#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/reference_options.h"
#include "common/atomic_file.h"
#include "common/cli_exit.h"
#include "common/sha256.h"
#include "reference/activation_table.h"

namespace fuseproof::cli {

namespace {
struct TableArgs {
  std::string act = "gelu_tanh";
  std::string dtype;
  std::string out;
  bool f32 = false;
  ReferenceOptions ref_opts;
};

int run(TableArgs& a) {
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  const auto act = ref::parse_activation(a.act);
  if (!act) throw UsageError("table: unknown --act " + a.act + " (gelu_tanh, gelu_erf, silu)");
  const ref::MathConfig cfg = a.ref_opts.resolve();
  std::vector<uint32_t> table;
  if (a.f32) {
    table = ref::activation_table_f32(*act, d, cfg);
    write_file_atomically(a.out, ref::u32_table_bytes(table));
  } else {
    const auto t16 = ref::activation_table(*act, d, cfg);
    table.assign(t16.begin(), t16.end());
    write_file_atomically(a.out, ref::u16_table_bytes(t16));
  }
  std::printf("wrote %s: %s %s%s, %s, contraction=%s, 65536 entries, sha256 %s\n", a.out.c_str(), a.act.c_str(),
              a.dtype.c_str(), a.f32 ? " binary32" : "", a.ref_opts.describe().c_str(), a.ref_opts.contraction.c_str(),
              Sha256::of_file(a.out).c_str());
  const GoldenArch g = a.ref_opts.golden();
  const std::string file = golden_table_file(*act, d, a.f32);
  if (!g.has(file)) {
    std::printf("%s/%s: missing (not compared)\n", g.label().c_str(), file.c_str());
    return 0;
  }
  std::vector<uint32_t> want;
  if (a.f32) want = g.u32_table(file);
  else for (uint16_t v : g.u16_table(file)) want.push_back(v);
  uint32_t differ = 0;
  for (size_t i = 0; i < table.size(); ++i) differ += table[i] != want[i];
  std::printf("%s/%s: %u of 65536 entries differ\n", g.label().c_str(), file.c_str(), differ);
  return 0;  // a model that differs from the device is a finding, not an error of this command
}
}  // namespace

void add_table_command(CLI::App& app) {
  auto args = std::make_shared<TableArgs>();
  CLI::App* cmd = app.add_subcommand("table", "Tabulate an activation of the reference over all 65,536 inputs");
  cmd->alias("gelu-table");  // the command's name before the family: `fuseproof gelu-table` keeps working
  cmd->alias("gelu-table");
  cmd->add_option("--act", args->act, "gelu_tanh, gelu_erf or silu")->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "bf16 or fp16")->required()->check(CLI::IsMember({"bf16", "fp16"}));
  cmd->add_flag("--f32", args->f32, "the binary32 values (65,536 little-endian uint32) instead of the rounded ones");
  cmd->add_option("--out", args->out, "output file: 65,536 little-endian uint16 (uint32 with --f32)")->required()->check(output_file_option());
  args->ref_opts.add_to(*cmd);
  cmd->final_callback([args] {
    const OutputClaims claims = claim_output_paths({{"--out", args->out}});  // checked before the table is computed
    throw CLI::RuntimeError(run(*args));
  });
}

}  // namespace fuseproof::cli
