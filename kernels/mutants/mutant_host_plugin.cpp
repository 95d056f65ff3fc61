// mutant_host_plugin.cpp: a host-memory plugin carrying the bug FUSEPROOF_MUTANT_BUG (built once per bug by CMake).
#include <emmintrin.h>

#include <cmath>
#include <cstdlib>

#include "kernels/mutants/mutant_export.h"
#include "kernels/mutants/mutant_host_kernel.h"
#include "kernels/mutants/mutant_validate.h"

namespace fuseproof::mutants {
namespace {

int entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* /*stream*/,
          char* error, size_t error_size) {
  if (int rc = validate(kBug, out, x, bias, rows, width, dtype, kVectorBytes, error, error_size)) return rc;
  if constexpr (kBug == Bug::kHangOnEmpty) {
    // a count of rows - 1 taken as unsigned: 2^64 - 1 iterations when rows == 0
    if (rows == 0)
      for (volatile uint64_t r = 0; r < uint64_t(rows - 1); r = r + 1) {
      }
  }
  if constexpr (kBug == Bug::kSegvOnMisaligned) {
    // Aligned SSE loads of every pointer, as a vectorised body would do: #GP (SIGSEGV) when one is misaligned.
    volatile __m128i sink = _mm_load_si128(static_cast<const __m128i*>(x));
    sink = _mm_load_si128(static_cast<const __m128i*>(bias));
    _mm_store_si128(static_cast<__m128i*>(out), _mm_load_si128(static_cast<const __m128i*>(out)));
    (void)sink;
  }
  if constexpr (kBug == Bug::kAbortOnNan) {
    const bool bf16 = dtype == FUSEPROOF_DTYPE_BF16;
    for (int64_t i = 0; i < rows * width; ++i) {
      const float v = bf16 ? bf16_widen(static_cast<const uint16_t*>(x)[i])
                           : fp16_widen(static_cast<const uint16_t*>(x)[i], false);
      if (std::isnan(v)) std::abort();
    }
  }
  bias_gelu_host(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(bias),
                 rows, width, dtype == FUSEPROOF_DTYPE_BF16, vector_elems(kVectorBytes), kBug);
  return 0;
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_MUTANT_EXPORT("host", FUSEPROOF_MEMORY_HOST, &fuseproof::mutants::entry)
