// math_model.cpp: math model names.
#include "math_model.h"

namespace fuseproof::ref {

const char* math_model_name(MathModel m) {
  switch (m) {
    case MathModel::kCuda: return "cuda";
    case MathModel::kExact: return "exact";
    case MathModel::kLibm: return "libm";
  }
  return "?";
}

std::optional<MathModel> parse_math_model(std::string_view s) {
  for (MathModel m : kAllMathModels)
    if (s == math_model_name(m)) return m;
  return std::nullopt;
}

}  // namespace fuseproof::ref
