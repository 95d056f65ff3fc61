// reference_options.cpp: parsing and resolving the reference-model options.
#include "cli/reference_options.h"

#include <CLI/CLI.hpp>

namespace fuseproof::cli {

void ReferenceOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--math,--tanh", math, "math model of tanhf/expf/erff: cuda (sm_90 functions with captured MUFU "
                                        "data), exact (double), libm (host)")
      ->check(CLI::IsMember({"cuda", "exact", "libm"}))->capture_default_str();
  cmd.add_option("--contraction", contraction, "GELU(tanh)'s x + kKappa*x^3 as one FMA (nvcc default) or separate")
      ->check(CLI::IsMember({"fma", "separate"}))->capture_default_str();
  cmd.add_option("--nan-policy", nan_policy, "NaN pattern of the narrowing: cuda-cvt-rn, c10-scalar, c10-vectorized")
      ->check(CLI::IsMember({"cuda-cvt-rn", "c10-scalar", "c10-vectorized"}))->capture_default_str();
  cmd.add_option("--golden-dir", golden_dir, "golden data root")->capture_default_str()->check(CLI::ExistingDirectory);
  cmd.add_option("--golden-build-dir", golden_build_dir, "unpacked golden archives")->capture_default_str();
  cmd.add_option("--arch", arch, "golden architecture, sm_<digits> (default: the only one golden/ holds)")
      ->check([](const std::string& a) { return arch_name_error(a); });
}

GoldenArch ReferenceOptions::golden() const {
  return GoldenArch(golden_dir, golden_build_dir, resolve_golden_arch(golden_dir, arch, ""));
}

ref::MathConfig ReferenceOptions::resolve() const {
  ref::MathConfig cfg;
  cfg.math = *ref::parse_math_model(math);
  cfg.contraction = contraction == "fma" ? ref::Contraction::kFma : ref::Contraction::kSeparate;
  cfg.nan = *ref::parse_nan_policy(nan_policy);
  if (cfg.math == ref::MathModel::kCuda) {
    static const GoldenArch g = golden();  // loaded once per process: the MUFU tables are 64 MiB
    cfg.mufu = &g.mufu();
  }
  return cfg;
}

std::string ReferenceOptions::describe() const { return "math=" + math + " nan=" + nan_policy; }

}  // namespace fuseproof::cli
