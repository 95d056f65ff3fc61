// reference_options.h: the reference-model options shared by CLI commands (--math, --contraction, --nan-policy,
// --arch), resolved into a MathConfig with the golden architecture's MUFU data.
#pragma once

#include <string>

#include "common/golden_library.h"
#include "reference/math_model.h"

namespace CLI { class App; }

namespace fuseproof::cli {

struct ReferenceOptions {
  std::string math = "cuda";
  std::string contraction = "fma";
  std::string nan_policy = "cuda-cvt-rn";
  std::string golden_dir = default_golden_dir();
  std::string golden_build_dir = default_golden_build_dir();
  std::string arch;  ///< the golden architecture whose MUFU data the cuda model uses (default: the only one)

  void add_to(CLI::App& cmd);
  /// The golden data of --arch (resolved: the only architecture golden/ holds when none is named).
  GoldenArch golden() const;
  /// Throws MissingDataError / CorruptDataError (one line) when the cuda model's MUFU data cannot be loaded.
  ref::MathConfig resolve() const;
  /// "math=cuda nan=cuda-cvt-rn" for output lines.
  std::string describe() const;
};

}  // namespace fuseproof::cli
