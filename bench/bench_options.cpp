// bench_options.cpp: the --maths choices, from the kernel's name table.
#include "bench/bench_options.h"

#include "kernels/bias_gelu_tanh_launcher.h"

namespace fuseproof::bench {

std::vector<std::string> gelu_math_choices() {
  std::vector<std::string> names;
  for (GeluMath m : kAllGeluMaths) names.push_back(gelu_math_name(m));
  return names;
}

}  // namespace fuseproof::bench
