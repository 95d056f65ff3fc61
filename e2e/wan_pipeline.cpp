// wan_pipeline.cpp: the libtorch implementation of the Wan-style stand-in; the only pipeline TU that includes libtorch.
#include "wan_pipeline.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>
#ifndef FUSEPROOF_TORCH_CUDA
#define FUSEPROOF_TORCH_CUDA 0
#endif
#if FUSEPROOF_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "family_launcher.h"
#include "ffn_capture.h"
#include "nvfp4.h"
#include "quant_launcher.h"
#include "seeded_generator.h"
#include "adapters/torch_tensor_view.h"

namespace fuseproof::e2e {
namespace {

// Decoder contrast: rgb = 127.5 + 127.5 * tanh(kDecoderGain * projection).
constexpr double kDecoderGain = 0.7;
constexpr double kLayerNormEps = 1e-6;

at::Tensor host_tensor(const std::vector<float>& v, at::IntArrayRef sizes) {
  return at::from_blob(const_cast<float*>(v.data()), sizes, at::TensorOptions().dtype(at::kFloat)).clone();
}

/// A linear layer whose weights are bf16 values held in float32 (so every GEMM is an FP32-accumulate GEMM of
/// bf16 operands, on any device and libtorch version); optionally also an NVFP4 copy of the weights.
struct Linear {
  std::string name;
  at::Tensor wt;        ///< [in, out] float32, bf16-exact (the "checkpoint")
  at::Tensor wt_nvfp4;  ///< [in, out] float32, e2m1 * e4m3 (exact); undefined until quantised
  float tensor_scale = 1.0f;
  at::Tensor bias;      ///< [out] in the activation dtype (bf16-exact checkpoint values), or undefined
  at::Tensor bias_f32;  ///< the same values in float32, for the epilogue of non-site linears
  bool use_nvfp4 = false;
  bool skip_bias_add = false;  ///< site linears: return the GEMM without the bias, the mounted op adds it
};

Linear make_linear(uint64_t seed, const std::string& name, int64_t in, int64_t out, bool has_bias, float bias_scale,
                   bool quantise, const at::Device& device, at::ScalarType act) {
  Linear l;
  l.name = name;
  // The checkpoint is bf16: round the seeded float32 values once, on the CPU, then keep them exactly.
  const at::Tensor w = host_tensor(seeded_normal(seed, name + ".weight", static_cast<size_t>(out * in),
                                                 1.0f / std::sqrt(static_cast<float>(in))),
                                   {out, in})
                           .to(at::kBFloat16)
                           .to(at::kFloat)
                           .contiguous();
  l.wt = w.t().contiguous().to(device);
  if (quantise) {
    const Nvfp4Matrix q = quantize_nvfp4(w.data_ptr<float>(), out, in);
    l.tensor_scale = q.tensor_scale;
    l.wt_nvfp4 = host_tensor(dequantize_nvfp4_unscaled(q), {out, in}).t().contiguous().to(device);
  }
  if (has_bias) {
    l.bias = host_tensor(seeded_normal(seed, name + ".bias", static_cast<size_t>(out), bias_scale), {out})
                 .to(at::kBFloat16)
                 .to(act)
                 .to(device);
    l.bias_f32 = l.bias.to(at::kFloat);
  }
  return l;
}

/// FP32-accumulate GEMM, rounded once to x's dtype; no bias. NVFP4 applies its tensor scale to the FP32
/// accumulator, as NVFP4 GEMMs do in their epilogue.
at::Tensor gemm(const Linear& l, const at::Tensor& x) {
  at::Tensor acc = at::matmul(x.to(at::kFloat), l.use_nvfp4 ? l.wt_nvfp4 : l.wt);
  if (l.use_nvfp4) acc = acc * static_cast<double>(l.tensor_scale);
  return acc.to(x.scalar_type());
}

/// A site's linear (an NVFP4-capable GEMM without a bias epilogue): the GEMM, then, unless skip_bias_add, its bias
/// added eagerly in the activation dtype (one more rounding), as such linears do after their GEMM.
at::Tensor site_linear(const Linear& l, const at::Tensor& x) {
  const at::Tensor u = gemm(l, x);
  return !l.skip_bias_add && l.bias.defined() ? u + l.bias : u;
}

/// A linear layer with its bias in the FP32 epilogue (every linear that is not a fusion site).
at::Tensor linear(const Linear& l, const at::Tensor& x) {
  at::Tensor acc = at::matmul(x.to(at::kFloat), l.wt);
  if (l.bias.defined()) acc = acc + l.bias_f32;
  return acc.to(x.scalar_type());
}

/// SiLU; libtorch 1.13 has none on the CPU for fp16: there float opmath and one rounding, as CUDA eager computes it.
at::Tensor silu_opmath(const at::Tensor& t) {
  if (!t.is_cuda() && t.scalar_type() == at::kHalf) return at::silu(t.to(at::kFloat)).to(at::kHalf);
  return at::silu(t);
}

struct Site {
  std::string name;
  bool gelu_target = false;
  Linear* fc_in = nullptr;
  bool mounted = false;
  FusedBiasGelu op;
  FusedBiasGeluNvfp4 op_nvfp4;       // the mounted op when fc_out takes NVFP4 input (then op is empty)
  bool saved_skip_bias_add = false;  // fc_in's flag before mount(), restored by unmount()
  int fallback_calls = 0;
  std::string fallback_reason;
};

/// A DiT op of a dit_ops block (modulate before attention or the FFN, gated residual after it): eager tensor ops in the
/// activation dtype, or the mounted fused op.
struct DitSite {
  std::string name;  // blocks.<i>.modulate_attn, gate_attn, modulate_ffn, gate_ffn
  kernel::FamilyOp op = kernel::FamilyOp::kModulate;
  bool mounted = false;
  FusedDitOp fused;
  int fallback_calls = 0;
  std::string fallback_reason;
};

/// modulate_attn, gate_attn, modulate_ffn, gate_ffn: a block's DiT op sites in the order it computes them.
constexpr const char* kDitSiteSuffix[4] = {"modulate_attn", "gate_attn", "modulate_ffn", "gate_ffn"};

/// Eager PyTorch: x * (1 + scale) + shift and x + gate * y as separate tensor ops, each rounded to the dtype of x.
at::Tensor eager_dit_op(kernel::FamilyOp op, const at::Tensor& x, const at::Tensor& b, const at::Tensor& c) {
  if (op == kernel::FamilyOp::kModulate) return x * (b + 1.0) + c;
  return x + b * c;
}

struct Block {
  Linear modulation, qkv, attn_out, fc_in, fc_out;
};

/// fc_out's NVFP4 input: codes [rows, width / 2] (two E2M1 per byte) and E4M3 scales [rows, width / 16], uint8.
struct Nvfp4Activation {
  at::Tensor codes, scales;
};

/// A uint8 tensor as the int8 TensorView the launch API takes (TensorView has no uint8); `keep` holds the view's tensor.
TensorView byte_view(const at::Tensor& t, at::Tensor& keep) {
  keep = t.view(at::kChar);
  return torch_tensor_view(keep);
}

}  // namespace

struct WanPipeline::Impl {
  PipelineConfig config;
  at::Device device{at::kCPU};
  at::ScalarType act = at::kBFloat16;  // activation dtype
  Linear patch_embed, time_in, time_out, head;
  std::vector<Block> blocks;
  std::vector<Site> sites;  // blocks.<i>.ffn ..., time_embedding
  std::vector<DitSite> dit_sites;  // dit_ops: 4 per block, block b's at 4 b + k (kDitSiteSuffix[k])
  at::Tensor pos;           // [tokens, dim] activation dtype
  at::Tensor dec_wt;        // [channels, 3] float32
  at::Tensor up_h, up_wt;   // bilinear upsampling matrices [H, h] and [w, W]
  at::Tensor frame_idx0, frame_idx1, frame_w0, frame_w1;
  at::Tensor e2m1_pair_lut;  // [256, 2] float32: a codes byte's two E2M1 values (low nibble first)
  at::Tensor e4m3_lut;       // [256] float32: an E4M3 scale byte's value
  bool nvfp4 = false;

  Site* find(const std::string& name) {
    for (Site& s : sites) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }

  /// Eager bias (when fc_in left it to the site) + activation; GELU as CUDA eager computes it.
  at::Tensor eager_activation(const Site& s, const at::Tensor& u) const {
    const at::Tensor pre = s.fc_in->skip_bias_add && s.fc_in->bias.defined() ? u + s.fc_in->bias : u;
    if (!s.gelu_target) return silu_opmath(pre);
    if (pre.is_cuda()) return at::gelu(pre, "tanh");  // CUDA eager: opmath float inside, one rounding
    // libtorch's CPU bf16 GELU (1.13) rounds every intermediate to bf16 and differs from CUDA eager on 1015 of the
    // 65282 non-NaN bf16 inputs; computing in float and rounding once is CUDA eager's arithmetic (docs/E2E.md).
    return at::gelu(pre.to(at::kFloat), "tanh").to(pre.scalar_type());
  }

  DitSite* find_dit(const std::string& name) {
    for (DitSite& s : dit_sites) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }

  /// A DiT op site: the mounted op on (x, b, c) with group-broadcast rows b (gate or scale) and, for modulate, c
  /// (shift), one row per batch element (batch 1: group_rows = tokens); else, or when the op cannot take the call
  /// (recorded), the eager tensor ops.
  at::Tensor apply_dit(DitSite& s, const at::Tensor& x, const at::Tensor& b, const at::Tensor& c) {
    if (!s.mounted) return eager_dit_op(s.op, x, b, c);
    const at::Tensor xc = x.contiguous(), bc = b.contiguous(), cc = c.contiguous();  // [1, dim] rows: kernel_dit_op
    at::Tensor out = at::empty_like(xc);
    std::string why;
    try {
      const LaunchStatus st = s.fused.call(torch_tensor_view(out), torch_tensor_view(xc), torch_tensor_view(bc),
                                           torch_tensor_view(cc), xc.size(0));
      if (st.ok) return out;
      why = st.message;
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (s.fallback_calls++ == 0) s.fallback_reason = why;
    return eager_dit_op(s.op, x, b, c);
  }

  /// Whether site s's fc_out takes NVFP4 activations: the config asks for it and the site's fc_in runs NVFP4.
  bool fc_out_nvfp4(const Site& s) const { return config.fc_out_nvfp4_input && s.gelu_target && s.fc_in->use_nvfp4; }

  /// The site's fc_in output (without its bias while mounted), captured for the bench when asked.
  at::Tensor site_input(Site& s, const at::Tensor& h) {
    const at::Tensor u = site_linear(*s.fc_in, h);  // with skip_bias_add (mounted) the bias is left to the op
    if (s.gelu_target && s.fc_in->skip_bias_add && s.fc_in->bias.defined() && ffn_capture_pending()) {
      // FUSEPROOF_CAPTURE_FFN (ffn_capture.h): the fused op's x and bias, for `fuseproof bench --dist e2e`.
      const at::Tensor xc = u.contiguous().cpu(), bc = s.fc_in->bias.contiguous().cpu();
      capture_ffn_site(s.name, u.scalar_type() == at::kHalf ? "fp16" : "bf16",
                       static_cast<const uint16_t*>(xc.data_ptr()), xc.size(0), xc.size(1),
                       static_cast<const uint16_t*>(bc.data_ptr()));
    }
    return u;
  }

  at::Tensor apply_site(Site& s, const at::Tensor& h) {
    const at::Tensor u = site_input(s, h);
    if (!s.mounted) return eager_activation(s, u);
    at::Tensor out = at::empty_like(u);
    std::string why;
    try {
      const LaunchStatus st = s.op(torch_tensor_view(out), torch_tensor_view(u), torch_tensor_view(s.fc_in->bias));
      if (st.ok) return out;
      why = st.message;
    } catch (const std::exception& e) {
      why = e.what();
    }
    // The op cannot take this call (dtype, device, ...): run it eagerly and record why, rather than stop the run.
    if (s.fallback_calls++ == 0) s.fallback_reason = why;
    return eager_activation(s, u);
  }

  /// fc_out's NVFP4 input at site s: the mounted op's one call (bias + GELU + quantization); unmounted, or when the
  /// op cannot take the call (recorded), the unfused composition: eager bias + GELU, then the quantizer alone.
  Nvfp4Activation quantized_activation(Site& s, const at::Tensor& h) {
    const at::Tensor u = site_input(s, h).contiguous();
    const int64_t rows = u.size(0), width = u.size(1);
    const auto bytes = at::TensorOptions().dtype(at::kByte).device(u.device());
    Nvfp4Activation q{at::empty({rows, width / 2}, bytes), at::empty({rows, width / kNvfp4BlockSize}, bytes)};
    at::Tensor codes8, scales8;
    const TensorView codes = byte_view(q.codes, codes8), scales = byte_view(q.scales, scales8);
    const float g = config.fc_out_input_global_scale;
    if (s.mounted) {
      std::string why;
      try {
        const LaunchStatus st = s.op_nvfp4(codes, scales, torch_tensor_view(u), torch_tensor_view(s.fc_in->bias), g);
        if (st.ok) return q;
        why = st.message;
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (s.fallback_calls++ == 0) s.fallback_reason = why;
    }
    const at::Tensor a = eager_activation(s, u).contiguous();
    const LaunchStatus st = nvfp4_quant_views(codes, scales, torch_tensor_view(a), g);
    // The unfused composition is the baseline itself: a quantizer that cannot run it stops the run.
    if (!st.ok) throw std::runtime_error(s.name + ": fc_out input: " + st.message);
    return q;
  }

  /// fc_out on NVFP4 activations: the GEMM of code x scale (exact in float) with the bf16 weights, FP32 accumulate,
  /// then the epilogue: times 1 / global scale, plus the bias, rounded once to the activation dtype.
  at::Tensor linear_nvfp4_input(const Linear& l, const Nvfp4Activation& q) const {
    const int64_t rows = q.codes.size(0), width = 2 * q.codes.size(1), blocks = q.scales.size(1);
    const at::Tensor elems = e2m1_pair_lut.index_select(0, q.codes.reshape({-1}).to(at::kLong))
                                 .reshape({rows, blocks, kNvfp4BlockSize});
    const at::Tensor sc = e4m3_lut.index_select(0, q.scales.reshape({-1}).to(at::kLong)).reshape({rows, blocks, 1});
    at::Tensor acc = at::matmul((elems * sc).reshape({rows, width}), l.wt);
    acc = acc * (1.0 / static_cast<double>(config.fc_out_input_global_scale));
    if (l.bias.defined()) acc = acc + l.bias_f32;
    return acc.to(act);
  }

  /// Block b's FFN on h: fc_out(activation(fc_in(h))), fc_out's input in T or (fc_out_nvfp4) NVFP4.
  at::Tensor ffn(size_t b, const at::Tensor& h) {
    Site& s = sites[b];
    if (!fc_out_nvfp4(s)) return linear(blocks[b].fc_out, apply_site(s, h));
    return linear_nvfp4_input(blocks[b].fc_out, quantized_activation(s, h));
  }

  at::Tensor timestep_sinusoid(double t) const {
    const int half = config.freq_dim / 2;
    std::vector<float> e(static_cast<size_t>(config.freq_dim));
    for (int i = 0; i < half; ++i) {
      const double arg = t * std::exp(-std::log(10000.0) * i / half);
      e[static_cast<size_t>(i)] = static_cast<float>(std::cos(arg));
      e[static_cast<size_t>(half + i)] = static_cast<float>(std::sin(arg));
    }
    return host_tensor(e, {1, config.freq_dim}).to(act).to(device);
  }

  /// Full attention of a block over every token: float32 scores and softmax, the output rounded to the activation dtype.
  at::Tensor attention(const Block& blk, const at::Tensor& h) const {
    const int64_t T = h.size(0), D = config.dim, dh = config.dim / config.heads;
    const at::Tensor qkv = linear(blk.qkv, h).to(at::kFloat).reshape({T, 3, config.heads, dh}).permute({1, 2, 0, 3});
    const double attn_scale = 1.0 / std::sqrt(static_cast<double>(dh));
    const at::Tensor att = at::softmax(at::matmul(qkv[0], qkv[1].transpose(1, 2)) * attn_scale, -1);
    return at::matmul(att, qkv[2]).permute({1, 0, 2}).reshape({T, D}).to(act);
  }

  /// A dit_ops block: the modulation linear's six [1, dim] rows (shift, scale, gate for attention, then for the FFN)
  /// in the activation dtype; h = modulate(norm(x), scale, shift); x = gated_residual(x, gate, sublayer(h)); every op
  /// in the activation dtype (norm: float32 layer norm rounded once, as a bf16 LayerNorm returns it).
  at::Tensor dit_block(size_t b, at::Tensor x, const at::Tensor& temb) {
    const Block& blk = blocks[b];
    const int64_t D = config.dim;
    const std::vector<at::Tensor> mod = linear(blk.modulation, temb).chunk(6, 1);  // [1, dim] rows, one per batch
    DitSite* site = &dit_sites[4 * b];
    const auto norm = [&](const at::Tensor& t) {
      return at::layer_norm(t.to(at::kFloat), {D}, {}, {}, kLayerNormEps).to(act);
    };
    const at::Tensor h = apply_dit(site[0], norm(x), mod[1], mod[0]);
    x = apply_dit(site[1], x, mod[2], linear(blk.attn_out, attention(blk, h)));
    const at::Tensor h2 = apply_dit(site[2], norm(x), mod[4], mod[3]);
    return apply_dit(site[3], x, mod[5], ffn(b, h2));
  }

  at::Tensor velocity(const at::Tensor& latent, double sigma) {
    const PipelineConfig& c = config;
    const int64_t C = c.latent_channels, F = c.latent_frames, p = c.patch, H = c.latent_height / p,
                  W = c.latent_width / p, T = F * H * W, D = c.dim;
    const at::Tensor tok = latent.reshape({C, F, H, p, W, p}).permute({1, 2, 4, 0, 3, 5}).reshape({T, C * p * p});
    at::Tensor x = linear(patch_embed, tok.to(act)) + pos;
    const at::Tensor temb = silu_opmath(linear(time_out, apply_site(sites.back(), timestep_sinusoid(sigma * 1000.0))));
    for (size_t b = 0; b < blocks.size(); ++b) {
      const Block& blk = blocks[b];
      if (c.dit_ops) {
        x = dit_block(b, x, temb);
        continue;
      }
      // Wan: the modulation in float32, residuals without a gate.
      const std::vector<at::Tensor> mod = linear(blk.modulation, temb).to(at::kFloat).chunk(4, 1);
      const at::Tensor h = (at::layer_norm(x.to(at::kFloat), {D}, {}, {}, kLayerNormEps) * (mod[1] + 1.0) + mod[0])
                               .to(act);
      x = x + linear(blk.attn_out, attention(blk, h));
      const at::Tensor h2 = (at::layer_norm(x.to(at::kFloat), {D}, {}, {}, kLayerNormEps) * (mod[3] + 1.0) + mod[2])
                                .to(act);
      x = x + ffn(b, h2);
    }
    const at::Tensor out =
        linear(head, at::layer_norm(x.to(at::kFloat), {D}, {}, {}, kLayerNormEps).to(act)).to(at::kFloat);
    return out.reshape({F, H, W, C, p, p}).permute({3, 0, 1, 4, 2, 5}).reshape({C, F, H * p, W * p});
  }

  VideoFrames decode(const at::Tensor& latent) {
    const at::Tensor a = latent.index_select(1, frame_idx0);
    const at::Tensor b = latent.index_select(1, frame_idx1);
    const at::Tensor mix = a * frame_w0.view({1, -1, 1, 1}) + b * frame_w1.view({1, -1, 1, 1});  // [C, 81, h, w]
    const at::Tensor proj = at::matmul(mix.permute({1, 2, 3, 0}), dec_wt).permute({0, 3, 1, 2});  // [81, 3, h, w]
    const at::Tensor up = at::matmul(at::matmul(up_h, proj), up_wt);                               // [81, 3, H, W]
    const at::Tensor u8 = (at::tanh(up * kDecoderGain) * 127.5 + 127.5)
                              .round()
                              .clamp(0.0, 255.0)
                              .to(at::kByte)
                              .permute({0, 2, 3, 1})
                              .contiguous()
                              .cpu();
    VideoFrames v;
    v.count = static_cast<int>(u8.size(0));
    v.height = static_cast<int>(u8.size(1));
    v.width = static_cast<int>(u8.size(2));
    v.rgb.assign(u8.data_ptr<uint8_t>(), u8.data_ptr<uint8_t>() + u8.numel());
    return v;
  }
};

namespace {

/// Bilinear interpolation matrix [n * factor, n] with align_corners = false and edge clamping (PyTorch's convention).
std::vector<float> bilinear_matrix(int n, int factor) {
  const int m = n * factor;
  std::vector<float> a(static_cast<size_t>(m) * static_cast<size_t>(n), 0.0f);
  for (int i = 0; i < m; ++i) {
    const double src = std::max((i + 0.5) / factor - 0.5, 0.0);
    const int i0 = std::min(static_cast<int>(src), n - 1);
    const int i1 = std::min(i0 + 1, n - 1);
    const double l = src - i0;
    a[static_cast<size_t>(i) * n + i0] += static_cast<float>(1.0 - l);
    a[static_cast<size_t>(i) * n + i1] += static_cast<float>(l);
  }
  return a;
}

}  // namespace

FusedBiasGelu kernel_bias_gelu_tanh() {
  return [](const TensorView& out, const TensorView& x, const TensorView& bias) {
    BiasGeluOptions options;
#if FUSEPROOF_TORCH_CUDA
    // PyTorch's current stream of x's device, like an ATen op (adapters/torch_bias_gelu_tanh.h): ordered after the
    // linear that produced x and before the next op, on whatever stream the caller made current.
    if (x.device.kind == DeviceKind::kCuda) options.stream = c10::cuda::getCurrentCUDAStream(x.device.index).stream();
#endif
    return bias_gelu_tanh(out, x, bias, options);
  };
}

const char* dit_op_name(kernel::FamilyOp op) {
  return op == kernel::FamilyOp::kModulate ? "modulate" : op == kernel::FamilyOp::kGatedResidual ? "gated_residual" : "?";
}

FusedDitOp kernel_dit_op(kernel::FamilyOp op, kernel::Contract contract) {
  FusedDitOp f;
  f.op = op;
  f.call = [op, contract](const TensorView& out, const TensorView& x, const TensorView& b, const TensorView& c,
                          int64_t group_rows) -> LaunchStatus {
    const std::string name = std::string(dit_op_name(op)) + ": ";
    const TensorView* views[4] = {&out, &x, &b, &c};
    const bool mod = op == kernel::FamilyOp::kModulate;
    const char* names[4] = {"out", "x", mod ? "scale" : "gate", mod ? "shift" : "y"};
    for (int i = 0; i < 4; ++i) {
      const TensorView& v = *views[i];
      if (v.rank != 2) return {false, name + names[i] + " must be rank 2, got rank " + std::to_string(v.rank)};
      if (v.dtype != out.dtype) return {false, name + names[i] + " must have out's dtype"};
      if (v.device.kind != out.device.kind || v.device.index != out.device.index)
        return {false, name + names[i] + " must be on out's device"};
    }
    if (out.dtype != ScalarType::kBf16 && out.dtype != ScalarType::kFp16)
      return {false, name + "dtype must be bf16 or fp16"};
    fuseproof_call_t call{};
    call.struct_size = sizeof(fuseproof_call_t);
    call.dtype = out.dtype == ScalarType::kFp16 ? FUSEPROOF_DTYPE_FP16 : FUSEPROOF_DTYPE_BF16;
    call.shape[0] = out.sizes[0];
    call.shape[1] = out.sizes[1];
    call.out = out.data;
    call.n_inputs = 3;
    // A dimension of size 1 has no meaningful stride (PyTorch calls a [1, d] slice of a wider row contiguous): the
    // call gets the contiguous one there, so a [batch = 1, d] row is the ABI's {width, 1}.
    const auto stride = [](const TensorView& v, int d) { return v.sizes[d] == 1 ? (d == 0 ? v.sizes[1] : 1) : v.strides[d]; };
    for (int i = 0; i < 3; ++i) call.inputs[i] = {views[i + 1]->data, {stride(*views[i + 1], 0), stride(*views[i + 1], 1)}};
    call.group_rows = group_rows;
    const bool cuda = out.device.kind == DeviceKind::kCuda;
#if FUSEPROOF_TORCH_CUDA
    // PyTorch's current stream of out's device, as kernel_bias_gelu_tanh().
    if (cuda) call.stream = c10::cuda::getCurrentCUDAStream(out.device.index).stream();
#endif
    const std::string why = family_launch(FamilyLaunch{op, contract, cuda}, call);
    return why.empty() ? LaunchStatus{} : LaunchStatus{false, why};
  };
  return f;
}

namespace {

/// One quantization call over views through quant_launch: x [rows, width] contiguous bf16/fp16, bias (or null)
/// [width] of x's dtype, codes int8 [rows, width / 2] and scales int8 [rows, width / 16] contiguous, all on one
/// device; scales linear, scalars[0] = global_scale. A view that breaks a rule is refused here in one line, the
/// ABI's rules by the launcher.
LaunchStatus quant_views_call(kernel::QuantOp op, kernel::QuantContract contract, const TensorView& codes,
                              const TensorView& scales, const TensorView& x, const TensorView* bias,
                              float global_scale) {
  const std::string name = std::string(quant_op_name(op)) + ": ";
  const auto refuse = [&](const std::string& why) { return LaunchStatus{false, name + why}; };
  if (x.rank != 2) return refuse("x must be rank 2, got rank " + std::to_string(x.rank));
  if (x.dtype != ScalarType::kBf16 && x.dtype != ScalarType::kFp16)
    return refuse(std::string("x must be bf16 or fp16, got ") + scalar_type_name(x.dtype));
  const int64_t rows = x.sizes[0], width = x.sizes[1];
  if (x.strides[0] != width || x.strides[1] != 1) return refuse("x must be contiguous");
  if (bias != nullptr) {
    if (bias->rank != 1 || bias->sizes[0] != width || bias->strides[0] != 1)
      return refuse("bias must be one contiguous [width] row (" + std::to_string(width) + ")");
    if (bias->dtype != x.dtype) return refuse("bias must have x's dtype");
  }
  if (width % kNvfp4BlockSize) return refuse("width must be a multiple of 16, got " + std::to_string(width));
  const auto bytes_ok = [&](const TensorView& v, int64_t cols) {
    return v.rank == 2 && v.dtype == ScalarType::kInt8 && v.sizes[0] == rows && v.sizes[1] == cols &&
           v.strides[0] == cols && v.strides[1] == 1;
  };
  if (!bytes_ok(codes, width / 2))
    return refuse("codes must be contiguous int8 [rows, width / 2] = [" + std::to_string(rows) + ", " +
                  std::to_string(width / 2) + "]");
  if (!bytes_ok(scales, width / kNvfp4BlockSize))
    return refuse("scales must be contiguous int8 [rows, width / 16] = [" + std::to_string(rows) + ", " +
                  std::to_string(width / kNvfp4BlockSize) + "]");
  for (const TensorView* v : {&codes, &scales, bias}) {
    if (v != nullptr && (v->device.kind != x.device.kind || v->device.index != x.device.index))
      return refuse("codes, scales and bias must be on x's device");
  }
  fuseproof_call_t call{};
  call.struct_size = sizeof(fuseproof_call_t);
  call.dtype = x.dtype == ScalarType::kFp16 ? FUSEPROOF_DTYPE_FP16 : FUSEPROOF_DTYPE_BF16;
  call.shape[0] = rows;
  call.shape[1] = width;
  call.out = codes.data;
  call.n_inputs = bias != nullptr ? 2 : 1;
  call.inputs[0] = {x.data, {width, 1}};
  if (bias != nullptr) call.inputs[1] = {bias->data, {0, 1}};  // one row shared by every row
  call.scales = scales.data;
  call.scale_layout = FUSEPROOF_SCALE_LINEAR;
  call.n_scalars = 1;
  call.scalars[0] = global_scale;
  const bool cuda = x.device.kind == DeviceKind::kCuda;
#if FUSEPROOF_TORCH_CUDA
  // PyTorch's current stream of x's device, as kernel_bias_gelu_tanh().
  if (cuda) call.stream = c10::cuda::getCurrentCUDAStream(x.device.index).stream();
#endif
  const std::string why = quant_launch(QuantLaunch{op, contract, cuda}, call);
  return why.empty() ? LaunchStatus{} : LaunchStatus{false, why};
}

}  // namespace

FusedBiasGeluNvfp4 kernel_bias_gelu_tanh_nvfp4(kernel::QuantContract contract) {
  return [contract](const TensorView& codes, const TensorView& scales, const TensorView& x, const TensorView& bias,
                    float global_scale) {
    return quant_views_call(kernel::QuantOp::kBiasGeluTanhNvfp4Quant, contract, codes, scales, x, &bias, global_scale);
  };
}

LaunchStatus nvfp4_quant_views(const TensorView& codes, const TensorView& scales, const TensorView& x,
                               float global_scale, kernel::QuantContract contract) {
  return quant_views_call(kernel::QuantOp::kNvfp4Quant, contract, codes, scales, x, nullptr, global_scale);
}

WanPipeline::WanPipeline(const PipelineConfig& config, ComputeDevice device) : impl_(std::make_unique<Impl>()) {
  validate(config);
  c10::InferenceMode guard;
  Impl& m = *impl_;
  m.config = config;
  m.act = config.dtype == "fp16" ? at::kHalf : at::kBFloat16;
  if (device == ComputeDevice::kCuda) {
    if (!torch_cuda_available()) throw std::runtime_error("device: cuda requested but libtorch sees no CUDA device");
    m.device = at::Device(at::kCUDA, 0);
  } else {
    // One thread: CPU GEMM blocking, and so the bits, must not depend on the core count.
    at::set_num_threads(1);
  }
  const PipelineConfig& c = config;
  const uint64_t s = c.seed;
  const int64_t pp = static_cast<int64_t>(c.latent_channels) * c.patch * c.patch;
  m.patch_embed = make_linear(s, "patch_embed", pp, c.dim, true, 0.1f, false, m.device, m.act);
  m.time_in = make_linear(s, "time_embedding.fc_in", c.freq_dim, c.dim, true, 0.5f, false, m.device, m.act);
  m.time_out = make_linear(s, "time_embedding.fc_out", c.dim, c.dim, true, 0.1f, false, m.device, m.act);
  m.head = make_linear(s, "head", c.dim, pp, true, 0.1f, false, m.device, m.act);
  m.blocks.resize(static_cast<size_t>(c.blocks));
  for (int b = 0; b < c.blocks; ++b) {
    const std::string n = "blocks." + std::to_string(b);
    Block& blk = m.blocks[static_cast<size_t>(b)];
    blk.modulation = make_linear(s, n + ".modulation", c.dim, (c.dit_ops ? 6 : 4) * c.dim, true, 0.1f, false, m.device,
                                 m.act);
    blk.qkv = make_linear(s, n + ".qkv", c.dim, 3 * c.dim, true, 0.1f, false, m.device, m.act);
    blk.attn_out = make_linear(s, n + ".attn_out", c.dim, c.dim, true, 0.1f, false, m.device, m.act);
    // A linear in nvfp4_exclude is not quantised: it stays bf16 in every mode.
    const std::string fc_in = n + ".ffn.fc_in";
    const bool excluded = std::find(c.nvfp4_exclude.begin(), c.nvfp4_exclude.end(), fc_in) != c.nvfp4_exclude.end();
    blk.fc_in = make_linear(s, fc_in, c.dim, c.ffn_dim, c.block_has_fc_in_bias(b), 0.5f, !excluded, m.device, m.act);
    blk.fc_out = make_linear(s, n + ".ffn.fc_out", c.ffn_dim, c.dim, true, 0.1f, false, m.device, m.act);
  }
  for (int b = 0; b < c.blocks; ++b) {
    Linear* fc_in = &m.blocks[static_cast<size_t>(b)].fc_in;
    m.sites.push_back(Site{"blocks." + std::to_string(b) + ".ffn", true, fc_in, false, nullptr});
  }
  m.sites.push_back(Site{"time_embedding", false, &m.time_in, false, nullptr});  // SiLU: never a fused-GELU target
  if (c.dit_ops) {
    for (int b = 0; b < c.blocks; ++b) {
      for (int k = 0; k < 4; ++k) {
        DitSite d;
        d.name = "blocks." + std::to_string(b) + "." + kDitSiteSuffix[k];
        d.op = k % 2 == 0 ? kernel::FamilyOp::kModulate : kernel::FamilyOp::kGatedResidual;
        m.dit_sites.push_back(std::move(d));
      }
    }
  }

  const int64_t F = c.latent_frames, H = c.latent_height / c.patch, W = c.latent_width / c.patch;
  const at::Tensor pf = host_tensor(seeded_normal(s, "pos.frame", static_cast<size_t>(F * c.dim), 0.5f), {F, 1, 1, c.dim});
  const at::Tensor ph = host_tensor(seeded_normal(s, "pos.row", static_cast<size_t>(H * c.dim), 0.5f), {1, H, 1, c.dim});
  const at::Tensor pw = host_tensor(seeded_normal(s, "pos.col", static_cast<size_t>(W * c.dim), 0.5f), {1, 1, W, c.dim});
  m.pos = (pf + ph + pw).reshape({F * H * W, c.dim}).to(m.act).to(m.device);

  m.dec_wt = host_tensor(seeded_normal(s, "decoder.rgb", static_cast<size_t>(3 * c.latent_channels),
                                       1.0f / std::sqrt(static_cast<float>(c.latent_channels))),
                         {3, c.latent_channels})
                 .t()
                 .contiguous()
                 .to(m.device);
  m.up_h = host_tensor(bilinear_matrix(c.latent_height, c.vae_spatial), {c.output_height(), c.latent_height}).to(m.device);
  m.up_wt = host_tensor(bilinear_matrix(c.latent_width, c.vae_spatial), {c.output_width(), c.latent_width})
                .t()
                .contiguous()
                .to(m.device);
  // Output frame k > 0 interpolates latent frames f - 1 and f, f = (k - 1) / T + 1, weight ((k - 1) % T + 1) / T.
  const int n_out = c.output_frames();
  std::vector<int64_t> i0(static_cast<size_t>(n_out)), i1(static_cast<size_t>(n_out));
  std::vector<float> w0(static_cast<size_t>(n_out)), w1(static_cast<size_t>(n_out));
  for (int k = 0; k < n_out; ++k) {
    const int f = k == 0 ? 0 : (k - 1) / c.vae_temporal + 1;
    const float t = k == 0 ? 1.0f : static_cast<float>((k - 1) % c.vae_temporal + 1) / static_cast<float>(c.vae_temporal);
    i0[static_cast<size_t>(k)] = k == 0 ? 0 : f - 1;
    i1[static_cast<size_t>(k)] = f;
    w1[static_cast<size_t>(k)] = t;
    w0[static_cast<size_t>(k)] = 1.0f - t;
  }
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  m.frame_idx0 = at::from_blob(i0.data(), {n_out}, i64).clone().to(m.device);
  m.frame_idx1 = at::from_blob(i1.data(), {n_out}, i64).clone().to(m.device);
  m.frame_w0 = host_tensor(w0, {n_out}).to(m.device);
  m.frame_w1 = host_tensor(w1, {n_out}).to(m.device);
  std::vector<float> pairs(512), scales(256);
  for (int byte = 0; byte < 256; ++byte) {
    pairs[static_cast<size_t>(2 * byte)] = e2m1_to_f32(static_cast<uint8_t>(byte & 0xF));
    pairs[static_cast<size_t>(2 * byte + 1)] = e2m1_to_f32(static_cast<uint8_t>(byte >> 4));
    scales[static_cast<size_t>(byte)] = e4m3_to_f32(static_cast<uint8_t>(byte));
  }
  m.e2m1_pair_lut = host_tensor(pairs, {256, 2}).to(m.device);
  m.e4m3_lut = host_tensor(scales, {256}).to(m.device);
}

WanPipeline::~WanPipeline() = default;
WanPipeline::WanPipeline(WanPipeline&&) noexcept = default;
WanPipeline& WanPipeline::operator=(WanPipeline&&) noexcept = default;

void WanPipeline::set_fc_in_nvfp4(bool nvfp4) {
  impl_->nvfp4 = nvfp4;
  // Only linears that have NVFP4 weights (FFN fc_in not in nvfp4_exclude) are marked.
  for (Block& b : impl_->blocks) b.fc_in.use_nvfp4 = nvfp4 && b.fc_in.wt_nvfp4.defined();
  if (!nvfp4) unmount_all();
}

bool WanPipeline::fc_in_nvfp4() const { return impl_->nvfp4; }

std::vector<SiteInfo> WanPipeline::sites() const {
  std::vector<SiteInfo> out;
  for (const Site& s : impl_->sites) {
    SiteInfo i{s.name, s.gelu_target, s.fc_in->use_nvfp4, s.fc_in->bias.defined(), s.mounted};
    i.fc_in_skip_bias_add = s.fc_in->skip_bias_add;
    i.fc_out_nvfp4_input = impl_->fc_out_nvfp4(s);
    i.fallback_calls = s.fallback_calls;
    i.fallback_reason = s.fallback_reason;
    out.push_back(i);
  }
  for (const DitSite& s : impl_->dit_sites) {
    SiteInfo i{s.name, false, false, false, s.mounted};
    i.fallback_calls = s.fallback_calls;
    i.fallback_reason = s.fallback_reason;
    i.dit_op = dit_op_name(s.op);
    out.push_back(i);
  }
  return out;
}

std::vector<LinearInfo> WanPipeline::linears() const {
  const Impl& m = *impl_;
  std::vector<const Linear*> all = {&m.patch_embed, &m.time_in, &m.time_out};
  for (const Block& b : m.blocks) {
    for (const Linear* l : {&b.modulation, &b.qkv, &b.attn_out, &b.fc_in, &b.fc_out}) all.push_back(l);
  }
  all.push_back(&m.head);
  std::vector<LinearInfo> out;
  for (const Linear* l : all) out.push_back(LinearInfo{l->name, l->use_nvfp4, l->skip_bias_add, l->bias.defined()});
  return out;
}

namespace {

/// True when `site` would be a DiT op site of one of the config's blocks (blocks.<i>.<kDitSiteSuffix>).
bool names_dit_site(const PipelineConfig& c, const std::string& site) {
  for (int b = 0; b < c.blocks; ++b) {
    for (const char* k : kDitSiteSuffix) {
      if (site == "blocks." + std::to_string(b) + "." + k) return true;
    }
  }
  return false;
}

constexpr const char* kNoDitOps = "the config's blocks have no DiT ops (dit_ops off: fp32 modulation, no gates)";

}  // namespace

MountStatus WanPipeline::mount(const std::string& site) {
  if (DitSite* d = impl_->find_dit(site)) return mount(site, kernel_dit_op(d->op));
  if (impl_->config.fc_out_nvfp4_input) return mount(site, kernel_bias_gelu_tanh_nvfp4());
  return mount(site, kernel_bias_gelu_tanh());
}

MountStatus WanPipeline::mount(const std::string& site, FusedDitOp op) {
  const auto reject = [&](const std::string& why) { return MountStatus{false, "mount " + site + ": " + why}; };
  DitSite* d = impl_->find_dit(site);
  if (d == nullptr) {
    if (impl_->find(site) != nullptr) return reject(std::string("site does not compute ") + dit_op_name(op.op));
    return reject(names_dit_site(impl_->config, site) ? kNoDitOps : "no such site");
  }
  if (op.op != d->op)
    return reject(std::string("site computes ") + dit_op_name(d->op) + ", the op is " + dit_op_name(op.op));
  if (!op.call) return reject("no op given");
  d->fused = std::move(op);
  d->fallback_calls = 0;
  d->fallback_reason.clear();
  d->mounted = true;
  return MountStatus{};
}

namespace {

/// Why FFN site `name` cannot take a fused bias + GELU op, quantizing (fc_out's NVFP4 input) or not; "" when it can.
std::string gelu_site_rejection(const PipelineConfig& c, const std::string& name, bool dit_site, const Site* s,
                                bool op_quantizes) {
  if (dit_site) return "site is not a fused-GELU target";
  if (s == nullptr) return names_dit_site(c, name) ? kNoDitOps : "no such site";
  if (!s->gelu_target) return "site is not a fused-GELU target";
  if (!s->fc_in->wt_nvfp4.defined()) return "fc_in is excluded from NVFP4 (nvfp4_exclude)";
  if (!s->fc_in->use_nvfp4) return "fc_in is not NVFP4";
  if (!s->fc_in->bias.defined()) return "fc_in has no bias";
  if (c.fc_out_nvfp4_input && !op_quantizes)
    return "fc_out takes NVFP4 input (fc_out_nvfp4_input): the op must quantize";
  if (!c.fc_out_nvfp4_input && op_quantizes) return "fc_out does not take NVFP4 input (fc_out_nvfp4_input off)";
  return "";
}

/// Marks an accepted FFN site mounted: fc_in leaves its bias to the op, its flag kept for unmount().
void arm_gelu_site(Site& s) {
  s.saved_skip_bias_add = s.fc_in->skip_bias_add;
  s.fc_in->skip_bias_add = true;
  s.fallback_calls = 0;
  s.fallback_reason.clear();
  s.mounted = true;
}

}  // namespace

MountStatus WanPipeline::mount(const std::string& site, FusedBiasGelu op) {
  Site* s = impl_->find(site);
  const std::string why = gelu_site_rejection(impl_->config, site, impl_->find_dit(site) != nullptr, s, false);
  if (!why.empty() || !op) return MountStatus{false, "mount " + site + ": " + (why.empty() ? "no op given" : why)};
  if (s->mounted) unmount(site);
  s->op = std::move(op);
  arm_gelu_site(*s);
  return MountStatus{};
}

MountStatus WanPipeline::mount(const std::string& site, FusedBiasGeluNvfp4 op) {
  Site* s = impl_->find(site);
  const std::string why = gelu_site_rejection(impl_->config, site, impl_->find_dit(site) != nullptr, s, true);
  if (!why.empty() || !op) return MountStatus{false, "mount " + site + ": " + (why.empty() ? "no op given" : why)};
  if (s->mounted) unmount(site);
  s->op_nvfp4 = std::move(op);
  arm_gelu_site(*s);
  return MountStatus{};
}

void WanPipeline::unmount(const std::string& site) {
  if (DitSite* d = impl_->find_dit(site)) {
    d->mounted = false;
    d->fused = FusedDitOp{};
    return;
  }
  Site* s = impl_->find(site);
  if (s == nullptr || !s->mounted) return;
  s->fc_in->skip_bias_add = s->saved_skip_bias_add;
  s->mounted = false;
  s->op = nullptr;
  s->op_nvfp4 = nullptr;
}

void WanPipeline::unmount_all() {
  for (Site& s : impl_->sites) unmount(s.name);
  for (DitSite& s : impl_->dit_sites) unmount(s.name);
}

VideoFrames WanPipeline::run() {
  c10::InferenceMode guard;
  Impl& m = *impl_;
  const PipelineConfig& c = m.config;
  at::Tensor latent =
      host_tensor(seeded_normal(c.seed, "latent",
                                static_cast<size_t>(c.latent_channels) * c.latent_frames * c.latent_height * c.latent_width,
                                1.0f),
                  {c.latent_channels, c.latent_frames, c.latent_height, c.latent_width})
          .to(m.device);
  for (int i = 0; i < c.steps; ++i) {
    // Wan's shifted flow-matching schedule from sigma 1 to 0; host doubles, so every device sees the same sigmas.
    const auto sigma = [&](int k) {
      const double u = 1.0 - static_cast<double>(k) / c.steps;
      return c.flow_shift * u / (1.0 + (c.flow_shift - 1.0) * u);
    };
    const double s0 = sigma(i), s1 = sigma(i + 1);
    latent = latent + m.velocity(latent, s0) * (s1 - s0);
  }
  return m.decode(latent);
}

const PipelineConfig& WanPipeline::config() const { return impl_->config; }

std::string WanPipeline::device_name() const {
  return impl_->device.is_cuda() ? "cuda:" + std::to_string(impl_->device.index()) : "cpu";
}

std::vector<MountStatus> apply_quality(WanPipeline& p, Quality q) {
  p.unmount_all();
  p.set_fc_in_nvfp4(q != Quality::kLossless);
  std::vector<MountStatus> results;
  if (q == Quality::kHigh) {
    for (const SiteInfo& s : p.sites()) results.push_back(p.mount(s.name));
  }
  return results;
}

std::string torch_version() { return TORCH_VERSION; }

bool torch_cuda_available() { return at::hasCUDA(); }

}  // namespace fuseproof::e2e
