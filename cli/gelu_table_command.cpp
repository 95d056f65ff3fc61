// gelu_table_command.cpp: `fuseproof gelu-table --dtype D --tanh M --out FILE`.
#include "cli/gelu_table_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>

#include "audit/golden_store.h"
#include "cli/reference_options.h"
#include "common/atomic_file.h"
#include "common/sha256.h"
#include "reference/gelu_table.h"

namespace fuseproof::cli {

using audit::can_write;
using audit::default_golden_dir;
using audit::golden_gelu_table_path;

namespace {
struct GeluTableArgs {
  std::string dtype;
  std::string out;
  std::string golden_dir = default_golden_dir();
  std::string arch = "sm_90";
  ReferenceOptions ref_opts;
};

int run(GeluTableArgs& a) {
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  std::string why;
  if (!can_write(a.out, &why)) throw std::runtime_error("gelu-table: cannot write --out " + a.out + ": " + why);
  const auto table = ref::gelu_tanh_table(d, a.ref_opts.resolve());
  write_file_atomically(a.out, ref::u16_table_bytes(table));
  std::printf("wrote %s: gelu_tanh %s, tanh=%s, contraction=%s, nan=%s, 65536 entries, sha256 %s\n", a.out.c_str(),
              a.dtype.c_str(), a.ref_opts.tanh.c_str(), a.ref_opts.contraction.c_str(), a.ref_opts.nan_policy.c_str(),
              Sha256::of_file(a.out).c_str());
  const std::string golden = golden_gelu_table_path(a.golden_dir, a.arch, d);
  if (!std::filesystem::exists(golden)) {
    std::printf("golden/%s: missing for %s (not compared)\n", a.arch.c_str(), a.dtype.c_str());
    return 0;
  }
  const auto want = ref::read_u16_table(golden);
  uint32_t differ = 0;
  for (size_t i = 0; i < table.size(); ++i) differ += table[i] != want[i];
  std::printf("golden/%s/%s: %u of 65536 entries differ\n", a.arch.c_str(),
              std::filesystem::path(golden).filename().c_str(), differ);
  return 0;  // a model that differs from the device is a finding, not an error of this command
}
}  // namespace

void add_gelu_table_command(CLI::App& app) {
  auto args = std::make_shared<GeluTableArgs>();
  CLI::App* cmd = app.add_subcommand("gelu-table", "Tabulate the reference GELU(tanh) over all 65,536 inputs");
  cmd->add_option("--dtype", args->dtype, "bf16 or fp16")->required()->check(CLI::IsMember({"bf16", "fp16"}));
  cmd->add_option("--out", args->out, "output file: 65,536 little-endian uint16")->required();
  cmd->add_option("--golden-dir", args->golden_dir, "golden data root")->capture_default_str()->check(CLI::ExistingDirectory);
  cmd->add_option("--arch", args->arch, "architecture whose golden table to compare with")->capture_default_str();
  args->ref_opts.add_to(*cmd);
  cmd->final_callback([args] { throw CLI::RuntimeError(run(*args)); });
}

}  // namespace fuseproof::cli
