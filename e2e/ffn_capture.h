// ffn_capture.h: an environment hook that writes the first FFN site's fused-op inputs (the pre-activation x and its
// bias) to raw files, for `fuseproof bench --dist e2e --e2e-capture DIR`.
#pragma once

#include <cstdint>
#include <string>

namespace fuseproof::e2e {

/// The environment variable naming the capture folder: FUSEPROOF_CAPTURE_FFN=DIR fuseproof e2e run ...
inline constexpr const char* kCaptureFfnEnv = "FUSEPROOF_CAPTURE_FFN";

/// True when kCaptureFfnEnv is set and this process has not captured a site yet.
bool ffn_capture_pending();

/// Writes DIR/ffn_x.bin (rows x width), DIR/ffn_bias.bin (width), raw little-endian 16-bit patterns of `dtype`
/// ("bf16" or "fp16"), and DIR/ffn_capture.json {site, dtype, rows, width, x, bias}; marks the capture done. Throws
/// std::runtime_error (one line) when it cannot.
void capture_ffn_site(const std::string& site, const std::string& dtype, const uint16_t* x, int64_t rows, int64_t width,
                      const uint16_t* bias);

}  // namespace fuseproof::e2e
