// quant_testbed.h: the quantization plugins' testbed: load a plugin, build a version-4 call over seeded blocks (random
// and edge blocks), run it into guarded buffers, and compare codes, scales and padding with ref::QuantPlan.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/fuseproof_kernel_abi.h"
#include "kernels/mutants/quant_bugs.h"
#include "reference/dtype.h"
#include "reference/half_codec.h"
#include "reference/quant_block.h"
#include "reference/quant_spec.h"

namespace fuseproof::test {

/// A loaded plugin: the descriptor of lib<name>.so in `dir` (kept loaded for the process).
inline const fuseproof_kernel_descriptor_t* load_quant_plugin(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/lib" + name + ".so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error("cannot load " + path + ": " + dlerror());
  auto fn = reinterpret_cast<fuseproof_kernel_descriptor_fn>(dlsym(h, FUSEPROOF_KERNEL_DESCRIPTOR_SYMBOL));
  if (!fn) throw std::runtime_error(path + " exports no descriptor");
  return fn();
}

/// The plugin name of op's contract on `backend`: lib<op>_<backend>.so for the first contract, else
/// lib<op>_<contract>_<backend>.so.
inline std::string quant_plugin_name(const ref::QuantOpSpec& op, ref::QuantContract c, const std::string& backend) {
  const bool first = op.contracts.front().contract == c;
  return op.name + (first ? "" : std::string("_") + ref::quant_contract_name(c)) + "_" + backend;
}

/// A quantization mutant that the testbed's seeded blocks must catch, with the contract and scale layout it is run
/// under: lib<memory>_<op>_<bug>.so.
struct SeededMutant {
  std::string name;
  const ref::QuantOpSpec* op;
  ref::QuantContract contract;
  ref::ScaleLayout layout;
};

/// Every bug of the catalogue (kernels/mutants/quant_bugs.h) whose killing class is blocks or layout, on each of the
/// quantizers alone it applies to (the ops with no activation stage; bit i of the mask is the registry's op i), for
/// `memory` "host" or "cuda"; layout bugs under the swizzled layout, the others the linear one.
inline std::vector<SeededMutant> seeded_block_mutants(const std::string& memory) {
  std::vector<SeededMutant> out;
  const std::vector<ref::QuantOpSpec>& ops = ref::quant_op_registry();
  for (const mutants::QuantBug& b : mutants::kQuantBugs) {
    const std::string klass = b.klass;
    if (klass != "blocks" && klass != "layout") continue;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!((b.ops >> i) & 1u) || !ops[i].activation.family_op.empty()) continue;
      const std::string contract = b.contract;
      const ref::QuantContract c = contract == "first" ? ops[i].contracts.front().contract
                                                       : ref::parse_quant_contract(contract).value();
      out.push_back({memory + "_" + ops[i].name + "_" + b.name, &ops[i], c,
                     klass == "layout" ? ref::ScaleLayout::kSwizzled128x4 : ref::ScaleLayout::kLinear});
    }
  }
  return out;
}

/// Bytes of guard around every output buffer; the plugin must leave them as poisoned.
inline constexpr size_t kGuard = 64;
inline constexpr uint8_t kPoison = 0xA5;

/// One call's buffers: inputs (16-byte aligned), codes and scales with guards, the scalars.
struct QuantCase {
  const ref::QuantOpSpec* op = nullptr;
  ref::QuantContract contract = ref::QuantContract::kVllmRef;
  ref::Dtype dtype = ref::Dtype::kBf16;
  ref::ScaleLayout layout = ref::ScaleLayout::kLinear;
  int64_t rows = 0, width = 0;
  float global_scale = 1.0f;
  std::vector<uint16_t> in0, in1;  ///< x or the packed [rows, 2 * width] gate|up; the bias row
  std::vector<uint8_t> codes, scales;  ///< each with kGuard bytes before and after

  int64_t blocks() const { return width / op->block_size; }
  bool e2m1() const { return op->element_format == ref::ElementFormat::kE2m1; }
  int64_t code_bytes() const { return e2m1() ? rows * width / 2 : rows * width; }
  int scale_cell_bytes() const { return e2m1() ? 1 : 4; }
  int64_t scale_bytes() const { return ref::scale_tensor_size(layout, rows, blocks()) * scale_cell_bytes(); }
  uint8_t* codes_data() { return codes.data() + kGuard; }
  uint8_t* scales_data() { return scales.data() + kGuard; }

  fuseproof_call_t call() {
    fuseproof_call_t c{};
    c.struct_size = sizeof(fuseproof_call_t);
    c.dtype = dtype == ref::Dtype::kBf16 ? FUSEPROOF_DTYPE_BF16 : FUSEPROOF_DTYPE_FP16;
    c.shape[0] = rows;
    c.shape[1] = width;
    c.out = codes_data();
    c.n_inputs = int32_t(op->inputs.size());
    const bool packed = op->inputs.size() == 2 && op->inputs[1].layout == ref::Layout::kPackedSecond;
    c.inputs[0] = {in0.data(), {packed ? 2 * width : width, 1}};
    if (op->inputs.size() == 2) {
      if (packed) c.inputs[1] = {in0.data() + width, {2 * width, 1}};
      else c.inputs[1] = {in1.data(), {0, 1}};
    }
    c.group_rows = 1;
    c.scales = scales_data();
    c.scale_layout = layout == ref::ScaleLayout::kLinear ? FUSEPROOF_SCALE_LINEAR : FUSEPROOF_SCALE_SWIZZLED_128X4;
    c.n_scalars = int32_t(op->contract(contract)->scalars.size());
    if (c.n_scalars) c.scalars[0] = global_scale;
    return c;
  }
};

/// A T pattern of a value: round(v) in dtype d.
inline uint16_t half_of(ref::Dtype d, float v) { return ref::f32_to_half(d, v, ref::NanPolicy::kCudaCvtRn); }

/// Fills one block of `n` T values at p (stride 1) by kind: 0 any bits, 1 normal values of one random binade, 2 signed
/// zeros, 3 normals and a NaN, 4 normals and an Inf, 5 an amax near 448 * 6 / g (the scale's overflow edge), 6
/// subnormals, 7 half signed zeros, half normals.
inline void fill_block(ref::Dtype d, uint16_t* p, int n, int kind, float g, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const int e = int(rng() % 24) - 12;
  auto normal = [&] { return half_of(d, std::ldexp(unit(rng), e)); };
  const uint16_t nan = d == ref::Dtype::kBf16 ? 0x7FC0 : 0x7E00, inf = d == ref::Dtype::kBf16 ? 0x7F80 : 0x7C00;
  for (int i = 0; i < n; ++i) {
    switch (kind) {
      case 0: p[i] = uint16_t(rng()); break;
      case 2: p[i] = uint16_t(rng() & 1 ? 0x8000 : 0); break;
      case 5: {
        const float edge = (g > 0.0f && g < 1e30f) ? 2688.0f / g : 2688.0f;
        p[i] = half_of(d, edge * (0.9f + 0.15f * (unit(rng) + 1.0f) / 2.0f) * (rng() & 1 ? -1.0f : 1.0f));
        break;
      }
      case 6: p[i] = uint16_t((rng() & 0x8000) | (rng() % (d == ref::Dtype::kBf16 ? 0x80 : 0x400))); break;
      case 7: p[i] = (i & 1) ? normal() : uint16_t(rng() & 1 ? 0x8000 : 0); break;
      default: p[i] = normal(); break;
    }
  }
  if (kind == 3) p[rng() % n] = uint16_t(nan | (rng() & 1 ? 0x8000 : 0));
  if (kind == 4) p[rng() % n] = uint16_t(inf | (rng() & 1 ? 0x8000 : 0));
}

/// A case of op/contract/dtype/layout with seeded blocks; every kind of block occurs in every call.
inline QuantCase make_quant_case(const ref::QuantOpSpec& op, ref::QuantContract c, ref::Dtype d, ref::ScaleLayout l,
                                 int64_t rows, int64_t blocks, float g, uint64_t seed) {
  QuantCase q;
  q.op = &op;
  q.contract = c;
  q.dtype = d;
  q.layout = l;
  q.rows = rows;
  q.width = blocks * op.block_size;
  q.global_scale = g;
  std::mt19937_64 rng(seed);
  const bool packed = op.inputs.size() == 2 && op.inputs[1].layout == ref::Layout::kPackedSecond;
  const int64_t in_row = packed ? 2 * q.width : q.width;
  q.in0.assign(size_t(rows * in_row), 0);
  const int B = op.block_size;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < in_row / B; ++k)
      fill_block(d, q.in0.data() + r * in_row + k * B, B, int((r * 3 + k) % 8), g, rng);
  if (op.inputs.size() == 2 && !packed) {
    q.in1.assign(size_t(q.width), 0);
    // A bias of small normals and zeros: x's blocks keep their kinds through the sum.
    for (int64_t i = 0; i < q.width; ++i) q.in1[size_t(i)] = i % 3 ? half_of(d, std::ldexp(float(rng() % 7) - 3.0f, -4)) : 0;
  }
  q.codes.assign(size_t(q.code_bytes()) + 2 * kGuard, kPoison);
  q.scales.assign(size_t(q.scale_bytes()) + 2 * kGuard, kPoison);
  return q;
}

/// What the reference expects of a case: codes (E2M1 packed two per byte; the no-code byte 0xFF as nibble 0xF) and
/// the scale tensor (E4M3 bytes or binary32 little-endian; padding cells 0x00).
struct QuantExpected {
  std::vector<uint8_t> codes, scales;
};

inline QuantExpected quant_expected(const QuantCase& q, const ref::QuantPlan& plan) {
  QuantExpected x;
  x.codes.assign(size_t(q.code_bytes()), 0);
  x.scales.assign(size_t(q.scale_bytes()), 0);
  const int B = q.op->block_size;
  const bool packed = q.op->inputs.size() == 2 && q.op->inputs[1].layout == ref::Layout::kPackedSecond;
  const int64_t in_row = packed ? 2 * q.width : q.width;
  std::vector<uint16_t> values(static_cast<size_t>(B));
  std::vector<uint8_t> codes(static_cast<size_t>(B));
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t k = 0; k < q.blocks(); ++k) {
      const uint16_t* in[2] = {q.in0.data() + r * in_row + k * B, nullptr};
      if (packed) in[1] = in[0] + q.width;
      else if (!q.in1.empty()) in[1] = q.in1.data() + k * B;
      for (int e = 0; e < B; ++e) values[size_t(e)] = plan.activation(in, e);
      const ref::QuantScale s = plan.quantize(values.data(), &q.global_scale, codes.data());
      const int64_t cell = ref::scale_offset(q.layout, r, k, q.rows, q.blocks());
      if (q.e2m1()) {
        for (int e = 0; e < B; e += 2)
          x.codes[size_t((r * q.width + k * B + e) / 2)] = uint8_t((codes[size_t(e)] & 0xF) | (codes[size_t(e + 1)] << 4));
        x.scales[size_t(cell)] = s.byte;
      } else {
        std::memcpy(x.codes.data() + r * q.width + k * B, codes.data(), size_t(B));
        const uint32_t u = ref::f32_bits(s.value);
        for (int b = 0; b < 4; ++b) x.scales[size_t(cell * 4 + b)] = uint8_t(u >> (8 * b));
      }
    }
  return x;
}

/// Compares a run case with the expectation; returns the mismatches (codes, scales, padding, guards) and fills up to
/// `max_lines` TestFloat-style lines.
inline uint64_t quant_compare(QuantCase& q, const QuantExpected& x, std::vector<std::string>& lines, size_t max_lines = 8) {
  uint64_t bad = 0;
  auto note = [&](const std::string& s) {
    ++bad;
    if (lines.size() < max_lines) lines.push_back(s);
  };
  char buf[256];
  const int64_t per_row = q.e2m1() ? q.width / 2 : q.width;
  for (int64_t i = 0; i < q.code_bytes(); ++i)
    if (q.codes_data()[i] != x.codes[size_t(i)]) {
      std::snprintf(buf, sizeof buf, "codes [r=%lld,byte=%lld] => 0x%02X expected 0x%02X", (long long)(i / per_row),
                    (long long)(i % per_row), q.codes_data()[i], x.codes[size_t(i)]);
      note(buf);
    }
  for (int64_t i = 0; i < q.scale_bytes(); ++i)
    if (q.scales_data()[i] != x.scales[size_t(i)]) {
      std::snprintf(buf, sizeof buf, "scales [byte=%lld] => 0x%02X expected 0x%02X", (long long)i, q.scales_data()[i],
                    x.scales[size_t(i)]);
      note(buf);
    }
  for (size_t i = 0; i < kGuard; ++i)
    if (q.codes[i] != kPoison || q.codes[q.codes.size() - 1 - i] != kPoison || q.scales[i] != kPoison ||
        q.scales[q.scales.size() - 1 - i] != kPoison) {
      note("a guard byte around codes or scales was written");
      break;
    }
  return bad;
}

}  // namespace fuseproof::test
