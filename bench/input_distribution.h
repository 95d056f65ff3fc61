// input_distribution.h: the benchmark's input distributions (N(0, sigma), uniform 16-bit patterns, the e2e
// pipeline's FFN pre-activations, a user's file): names, selection, loading and the host fill.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"

namespace fuseproof::bench {

enum class DistKind : int { kNormal, kUniform16, kSample };

/// One distribution of x and bias. kSample tensors cycle through captured patterns (x_sample; bias_sample, or the
/// x sample from its middle when there is none), starting at an offset that differs per rotating set.
struct Distribution {
  std::string name;  ///< "normal1", "uniform16", "e2e", "file"
  DistKind kind = DistKind::kNormal;
  float sigma = 1.0f;                    ///< kNormal
  std::vector<uint16_t> x_sample, bias_sample;  ///< kSample patterns
  std::string sample_dtype;  ///< e2e: "bf16" or "fp16" values, converted for runs of the other dtype; file: "" (as given)
  std::string source;           ///< the file(s) a kSample came from
};

/// normal0.25, normal1, normal4, normal16, uniform16, e2e: the default list of --dist.
const std::vector<std::string>& builtin_distribution_names();

/// The e2e capture's manifest inside --e2e-capture DIR (written by `FUSEPROOF_CAPTURE_FFN=DIR fuseproof e2e run`).
inline constexpr const char* kFfnCaptureManifest = "ffn_capture.json";

/// The distributions o asks for (o.dists, default every built-in; plus `file` when o.input_file is set), samples
/// loaded. Throws std::runtime_error (one line) on an unknown name, e2e asked for without a capture, --input without
/// --input-shape (or the reverse), a malformed shape, or a file whose size is not the shape's. When the default list
/// is used without --e2e-capture, e2e is left out and a line saying so is appended to `notes`.
std::vector<Distribution> resolve_distributions(const BenchOptions& o, std::vector<std::string>* notes);

/// n raw little-endian 16-bit patterns from `path`; throws std::runtime_error (one line, naming `option`) when the
/// file cannot be read or does not hold exactly n * 2 bytes.
std::vector<uint16_t> read_raw16(const std::string& path, int64_t n, const std::string& option);

/// The patterns a kSample distribution feeds a run of the given dtype: as captured, or (a sample of the other dtype)
/// each value rounded to the run's dtype to nearest even. `bias` picks the bias sample.
std::vector<uint16_t> sample_patterns(const Distribution& d, bool bf16, bool bias);

/// For bench.json's settings: [{name, sigma | source}...].
nlohmann::json distribution_settings(const std::vector<Distribution>& dists);

/// The rotating-set stream ids: x of set k, and the bias.
inline uint64_t x_stream(int set) { return 16 + uint64_t(set); }
inline constexpr uint64_t kBiasStream = 1;

/// Offset into a sample of m patterns for stream `stream` (x sets differ; the bias starts mid-sample).
int64_t sample_offset(uint64_t stream, int64_t m);

/// dst[0..n) of distribution d for dtype bf16/fp16 (kNormal rounds N(0, sigma) to the dtype to nearest even), the
/// same values bench/input_fill.cu writes on the device up to the last place of logf/cosf.
void fill_host(uint16_t* dst, int64_t n, const Distribution& d, bool bf16, uint64_t seed, uint64_t stream);

}  // namespace fuseproof::bench
