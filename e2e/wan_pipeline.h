// wan_pipeline.h: the deterministic Wan-style video diffusion stand-in, its fusion sites (bias + GELU; with dit_ops also
// modulate and gated residual) and their mount/unmount API.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bias_gelu_tanh_launcher.h"
#include "family_ops.h"
#include "pipeline_config.h"
#include "quant_ops.h"
#include "video_frames.h"

namespace fuseproof::e2e {

enum class ComputeDevice { kCpu, kCuda };

/// A fused bias + GELU(tanh) op over bf16 or fp16 views: out = gelu_tanh(round_T(x + bias)). Returns ok or a one-line
/// reason when it cannot take the call (dtype, device, shape): the pipeline then runs that call eagerly and records why.
using FusedBiasGelu = std::function<LaunchStatus(const TensorView& out, const TensorView& x, const TensorView& bias)>;
/// The fuseproof kernel through its launcher: the CUDA kernel for CUDA views, the CPU emulation for CPU views.
FusedBiasGelu kernel_bias_gelu_tanh();

/// A fused bias + GELU(tanh) + NVFP4 quantization (config.fc_out_nvfp4_input): of a = gelu_tanh(round_T(x + bias)),
/// x [rows, width] bf16 or fp16, bias [width], writes codes, int8 [rows, width / 2] (two E2M1 per byte, element 2j in
/// the low nibble), and scales, int8 [rows, width / 16] (one E4M3 byte per 16-element block of a row, linear layout),
/// under `global_scale`. Returns ok or a one-line reason when it cannot take the call: the pipeline then runs the
/// unfused composition (eager bias + GELU, then nvfp4_quant) for that call and records why.
using FusedBiasGeluNvfp4 = std::function<LaunchStatus(const TensorView& codes, const TensorView& scales,
                                                      const TensorView& x, const TensorView& bias, float global_scale)>;
/// bias_gelu_tanh_nvfp4_quant under `contract` as one call through the kernels' launch API (quant_launch with an ABI
/// v4 fuseproof_call_t: out = codes, scales linear, scalars[0] = global_scale): the CUDA kernel on PyTorch's current
/// stream for CUDA views, the CPU emulation for CPU views (which refuses rcp-approx). The pipeline mounts vllm-ref.
FusedBiasGeluNvfp4 kernel_bias_gelu_tanh_nvfp4(kernel::QuantContract contract = kernel::QuantContract::kVllmRef);
/// The quantizer alone, nvfp4_quant under `contract` (vllm-ref: the unfused composition's second call), of x
/// [rows, width] into codes and scales as above, through quant_launch on x's device.
LaunchStatus nvfp4_quant_views(const TensorView& codes, const TensorView& scales, const TensorView& x,
                               float global_scale,
                               kernel::QuantContract contract = kernel::QuantContract::kVllmRef);

/// A fused 3-input DiT op of the kernel family (kernels/family_ops.h): gated_residual, out = x + gate * y, inputs
/// (x, gate, y); or modulate, out = x * (1 + scale) + shift, inputs (x, scale, shift). x and y are [rows, d] views,
/// gate, scale and shift [rows / group_rows, d] (group-broadcast: one row per batch element of group_rows tokens).
/// `call` returns ok or a one-line reason when it cannot take the call: the pipeline then runs it eagerly and records why.
struct FusedDitOp {
  kernel::FamilyOp op = kernel::FamilyOp::kGatedResidual;  ///< kGatedResidual or kModulate: the site must compute it
  std::function<LaunchStatus(const TensorView& out, const TensorView& x, const TensorView& b, const TensorView& c,
                             int64_t group_rows)>
      call;
};
/// The built-in family kernel of `op` (kGatedResidual or kModulate) under `contract`, through the kernels' launch API
/// (family_launch with an ABI v3 fuseproof_call_t carrying group_rows): the CUDA kernel on PyTorch's current stream for
/// CUDA views, the CPU emulation for CPU views. The pipeline mounts the eager contract; the fma one is a negative
/// control (a kernel whose arithmetic is not eager's).
FusedDitOp kernel_dit_op(kernel::FamilyOp op, kernel::Contract contract = kernel::Contract::kEager);
/// "gated_residual" or "modulate".
const char* dit_op_name(kernel::FamilyOp op);

/// A candidate fusion site: an MLP whose activation follows fc_in, or (dit_ops) one modulate or gated residual of a block.
struct SiteInfo {
  std::string name;          ///< "blocks.<i>.ffn", "time_embedding", or blocks.<i>.{modulate,gate}_{attn,ffn}
  bool gelu_target = false;  ///< activation is bias + GELU(tanh) (the time embedding uses SiLU)
  bool fc_in_nvfp4 = false;
  bool fc_in_bias = false;
  bool mounted = false;
  bool fc_in_skip_bias_add = false;  ///< fc_in returns its output without the bias (set while mounted)
  int fallback_calls = 0;            ///< calls of the mounted op that fell back to eager since mount()
  std::string fallback_reason;       ///< the op's first reason, "" when none fell back
  std::string dit_op;                ///< "modulate" or "gated_residual" for a DiT op site, else ""
  bool fc_out_nvfp4_input = false;   ///< the FFN's fc_out takes NVFP4 activations (config knob and fc_in NVFP4)
  bool eligible() const { return !dit_op.empty() || (gelu_target && fc_in_nvfp4 && fc_in_bias); }
};

/// One linear layer: whether its weights run as NVFP4 and whether it leaves its bias to the caller.
struct LinearInfo {
  std::string name;  ///< "blocks.0.ffn.fc_in", "head", ...
  bool nvfp4 = false;
  bool skip_bias_add = false;
  bool has_bias = false;
};

/// Result of mount(): ok, or "mount <site>: <reason>" with reason one of "fc_in is not NVFP4", "fc_in is excluded from
/// NVFP4 (nvfp4_exclude)", "fc_in has no bias", "site is not a fused-GELU target", "no such site", and for the DiT op
/// sites "site does not compute <op>" (a DiT op at an FFN or the time embedding), "site computes <op>, the op is <op>",
/// "the config's blocks have no DiT ops (dit_ops off: fp32 modulation, no gates)", "no op given"; with
/// fc_out_nvfp4_input on, a bias + GELU op without the quantization: "fc_out takes NVFP4 input (fc_out_nvfp4_input):
/// the op must quantize"; off, a quantizing one: "fc_out does not take NVFP4 input (fc_out_nvfp4_input off)".
struct MountStatus {
  bool ok = true;
  std::string message;
  explicit operator bool() const { return ok; }
};

/// Seeded weights and latent (fuseproof's own generator, not libtorch's RNG), bf16 or fp16 activations (config.dtype),
/// FP32-accumulate GEMMs,
/// attention over every token of the 21-frame latent, flow-matching Euler steps, a fixed decoder to RGB24 frames.
class WanPipeline {
 public:
  /// Throws std::invalid_argument for a bad config, std::runtime_error when kCuda is asked for and no device is usable.
  WanPipeline(const PipelineConfig& config, ComputeDevice device);
  ~WanPipeline();
  WanPipeline(WanPipeline&&) noexcept;
  WanPipeline& operator=(WanPipeline&&) noexcept;

  /// fc_in weights of the FFN sites: bf16 (lossless) or NVFP4 (high). Only FFN fc_in linears not in nvfp4_exclude are
  /// marked NVFP4. Switching to bf16 unmounts every site (the FFN sites then no longer qualify); the bf16 weights are kept, so
  /// switching back and forth is exact.
  void set_fc_in_nvfp4(bool nvfp4);
  bool fc_in_nvfp4() const;

  std::vector<SiteInfo> sites() const;
  std::vector<LinearInfo> linears() const;
  /// Mounts the site's built-in kernel (bias_gelu_tanh at an FFN site, bias_gelu_tanh_nvfp4_quant vllm-ref there with
  /// fc_out_nvfp4_input, the eager-contract gated_residual or modulate at a DiT op site) under the rules below.
  MountStatus mount(const std::string& site);
  /// Mounts `op` at `site` if the site is eligible, setting its fc_in's skip_bias_add (the op adds the bias);
  /// otherwise leaves it eager and says why.
  MountStatus mount(const std::string& site, FusedBiasGelu op);
  /// With fc_out_nvfp4_input: mounts `op` at an FFN site under the FusedBiasGelu rules (fc_in NVFP4 with a bias, not
  /// excluded; skip_bias_add set): the site then makes fc_out's NVFP4 input in one call; otherwise says why.
  MountStatus mount(const std::string& site, FusedBiasGeluNvfp4 op);
  /// Mounts `op` at a DiT op site (dit_ops) computing op.op: the block then calls it instead of its eager tensor ops;
  /// otherwise leaves the site eager and says why. Every DiT op site of a dit_ops config is eligible.
  MountStatus mount(const std::string& site, FusedDitOp op);
  /// Restores the eager path and fc_in's skip_bias_add as it was before mount() (the linear adds its bias after the
  /// GEMM, one rounding to the activation dtype, then at::gelu tanh; a DiT op site's eager tensor ops in the
  /// activation dtype). Unknown or unmounted sites: no-op.
  void unmount(const std::string& site);
  void unmount_all();

  /// Denoises the seeded latent and decodes it. A mounted op that rejects a call (or throws) does not stop the run:
  /// that call runs eagerly and SiteInfo records the reason.
  VideoFrames run();

  const PipelineConfig& config() const;
  /// "cpu" or "cuda:<index>".
  std::string device_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sets `p` up for a quality mode: lossless = bf16 fc_in, nothing mounted; high = NVFP4 fc_in and the built-in kernel
/// mounted at every eligible site (FFN, and with dit_ops every DiT op site); high-eager = NVFP4 fc_in, nothing mounted. Returns the mount results (high) for reporting.
std::vector<MountStatus> apply_quality(WanPipeline& p, Quality q);

/// The libtorch version the pipeline was built against ("1.13.0").
std::string torch_version();
/// True when libtorch sees a CUDA device.
bool torch_cuda_available();

}  // namespace fuseproof::e2e
