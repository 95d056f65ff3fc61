// reference_options.cpp: parsing and resolving the reference-model options.
#include "cli/reference_options.h"

#include <CLI/CLI.hpp>

#include "audit/golden_store.h"

namespace fuseproof::cli {

using audit::default_golden_build_dir;

void ReferenceOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--tanh", tanh, "tanh model: cuda (sm_90 tanhf with captured MUFU), exact (double), libm (host)")
      ->check(CLI::IsMember({"cuda", "exact", "libm"}))->capture_default_str();
  cmd.add_option("--contraction", contraction, "x + kKappa*x^3 as one FMA (nvcc default) or separate")
      ->check(CLI::IsMember({"fma", "separate"}))->capture_default_str();
  cmd.add_option("--nan-policy", nan_policy, "NaN pattern of the narrowing: cuda-cvt-rn, c10-scalar, c10-vectorized")
      ->check(CLI::IsMember({"cuda-cvt-rn", "c10-scalar", "c10-vectorized"}))->capture_default_str();
  cmd.add_option("--mufu-dir", mufu_dir, "folder with mufu_*.bin (default: <build>/golden/sm_90)");
}

ref::GeluConfig ReferenceOptions::resolve() {
  ref::GeluConfig cfg;
  cfg.tanh = *ref::parse_tanh_model(tanh);
  cfg.contraction = contraction == "fma" ? ref::Contraction::kFma : ref::Contraction::kSeparate;
  cfg.nan = *ref::parse_nan_policy(nan_policy);
  if (cfg.tanh == ref::TanhModel::kCuda) {
    if (!mufu_) mufu_ = std::make_unique<ref::MufuModel>(ref::MufuModel::load(mufu_dir.empty() ? default_golden_build_dir() + "/sm_90" : mufu_dir));
    cfg.mufu = mufu_.get();
  }
  return cfg;
}

}  // namespace fuseproof::cli
