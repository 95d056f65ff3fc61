// pipeline_config.h: sizes of the Wan-style stand-in pipeline (small for CI on 2 CPU cores, default for GPU runs, and
// their -dit variants with gated residuals and activation-dtype modulation) and its quality modes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fuseproof::e2e {

/// Everything that decides the pipeline's numbers; two configs with equal JSON give equal frames on one device.
struct PipelineConfig {
  std::string name;
  uint64_t seed = 0x5EED2025;
  int latent_channels = 16;  ///< Wan's VAE latent channels
  int latent_frames = 21;    ///< 81 output frames = 1 + 4 * (21 - 1): Wan's VAE compresses time 4x plus one
  int latent_height = 8;
  int latent_width = 8;
  int patch = 2;             ///< spatial patch (1 x patch x patch), as Wan's patch embedding
  int dim = 64;
  int heads = 4;
  int ffn_dim = 256;
  int blocks = 2;
  int steps = 3;             ///< flow-matching Euler steps
  int freq_dim = 32;         ///< sinusoidal timestep embedding width
  double flow_shift = 5.0;   ///< Wan's sigma shift: s' = shift * s / (1 + (shift - 1) * s)
  int vae_spatial = 8;       ///< decoder upsampling factor
  int vae_temporal = 4;      ///< decoder frames per latent frame after the first
  int fps = 16;
  std::vector<bool> fc_in_bias;  ///< per block; empty means every block's fc_in has a bias (tests clear one)
  std::string dtype = "bf16";    ///< activations and biases: "bf16" or "fp16"
  /// Linears kept out of NVFP4 (as a checkpoint's modules_to_not_convert), e.g. "blocks.1.ffn.fc_in": never marked
  /// NVFP4, so their site is never mounted.
  std::vector<std::string> nvfp4_exclude;
  /// The blocks as bf16 DiTs other than Wan compute them: adaLN modulation `x * (1 + scale) + shift` and gated
  /// residuals `x + gate * y` (around attention and the FFN) in the activation dtype, each tensor op rounded to it,
  /// scale / shift / gate one [1, dim] row per batch element (six chunks of the modulation linear). Off (Wan): the
  /// modulation in float32, residuals without a gate. On, the blocks have the fusion sites blocks.<i>.modulate_attn,
  /// gate_attn, modulate_ffn and gate_ffn (wan_pipeline.h).
  bool dit_ops = false;
  /// fc_out of every FFN site whose fc_in runs NVFP4 takes NVFP4 activations: a = gelu_tanh(round_T(fc_in(x) + bias))
  /// quantized to NVFP4 (E2M1 codes, one E4M3 scale per 16 elements along fc_out's reduction dim, the static global
  /// scale below); fc_out's GEMM takes code x scale (exact in float) and applies 1 / global scale to its FP32
  /// accumulator. In high the site is one fused call, bias_gelu_tanh_nvfp4_quant (wan_pipeline.h). Off: fc_out's input
  /// is the activation in T.
  bool fc_out_nvfp4_input = false;
  /// The static global scale of those activations, one for every site, as serving stacks load `input_global_scale`
  /// (448 x 6 / calibrated amax) from a checkpoint: 128, a calibrated amax of 21; a power of two, so 1 / 128 is exact.
  float fc_out_input_global_scale = 128.0f;

  int output_frames() const { return 1 + vae_temporal * (latent_frames - 1); }
  int output_height() const { return latent_height * vae_spatial; }
  int output_width() const { return latent_width * vae_spatial; }
  int tokens() const { return latent_frames * (latent_height / patch) * (latent_width / patch); }
  bool block_has_fc_in_bias(int b) const { return fc_in_bias.empty() || fc_in_bias.at(static_cast<size_t>(b)); }
};

/// 21 x 8 x 8 latent (336 tokens), dim 64, 2 blocks, 3 steps: 81 frames of 64 x 64 in about a second on one CPU core.
PipelineConfig small_config();
/// 21 x 24 x 40 latent (5040 tokens), dim 512, 4 blocks, 8 steps: 81 frames of 320 x 192 for GPU runs.
PipelineConfig default_config();
/// small_config() with dit_ops: "small-dit".
PipelineConfig small_dit_config();
/// default_config() with dit_ops: "default-dit".
PipelineConfig default_dit_config();
/// "small", "default", "small-dit" or "default-dit"; throws std::invalid_argument naming the value otherwise.
PipelineConfig config_by_name(std::string_view name);
/// Throws std::invalid_argument with a one-line reason when a size rule is broken (divisibility, NVFP4 blocks), the
/// dtype is not bf16 or fp16, nvfp4_exclude names no FFN fc_in, or (fc_out_nvfp4_input) ffn_dim is not a multiple of
/// 16 or the global scale is not a positive finite float.
void validate(const PipelineConfig& c);

/// The config's JSON; "dtype" (fp16 only), "fc_in_bias", "nvfp4_exclude", "dit_ops" and "fc_out_nvfp4_input" (with
/// "fc_out_input_global_scale") appear only when not the default, so golden files written before they existed still
/// describe their runs.
nlohmann::json to_json(const PipelineConfig& c);

/// The three quality modes of the upstream design.
enum class Quality { kLossless, kHigh, kHighEager };
const char* quality_name(Quality q);  ///< "lossless", "high", "high-eager"
/// Throws std::invalid_argument: "mode must be one of lossless, high, high-eager, got 'x'".
Quality parse_quality(std::string_view name);

}  // namespace fuseproof::e2e
