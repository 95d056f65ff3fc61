// reference_options.h: the reference-model options shared by CLI commands (--tanh, --contraction, --nan-policy).
#pragma once

#include <memory>
#include <string>

#include "reference/gelu_tanh_eager.h"

namespace CLI { class App; }

namespace fuseproof::cli {

/// Option values as parsed; resolve() turns them into a GeluConfig (loading the MUFU tables for --tanh cuda).
struct ReferenceOptions {
  std::string tanh = "cuda";
  std::string contraction = "fma";
  std::string nan_policy = "cuda-cvt-rn";
  std::string mufu_dir;  ///< default: <golden build dir>/sm_90

  void add_to(CLI::App& cmd);
  /// Throws std::runtime_error (one line) when the MUFU tables cannot be loaded.
  ref::GeluConfig resolve();

 private:
  std::unique_ptr<ref::MufuModel> mufu_;
};

}  // namespace fuseproof::cli
