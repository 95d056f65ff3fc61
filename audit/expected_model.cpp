// expected_model.cpp: GELU tables from the reference, cross-checked against golden/sm_90.
#include "audit/expected_model.h"

#include <cstdlib>
#include <stdexcept>

#include "audit/golden_store.h"

#include "reference/mufu_model.h"

namespace fuseproof::audit {

GoldenPaths default_golden_paths() {
  GoldenPaths g;
  const char* d = std::getenv("FUSEPROOF_GOLDEN_DIR");
  const char* b = std::getenv("FUSEPROOF_GOLDEN_BUILD_DIR");
  g.dir = d && *d ? d : FUSEPROOF_DEFAULT_GOLDEN_DIR;
  g.build_dir = b && *b ? b : FUSEPROOF_DEFAULT_GOLDEN_BUILD_DIR;
  return g;
}

ExpectedModel make_expected_model(ref::Dtype d, ref::TanhModel tanh, const GoldenPaths& golden) {
  ExpectedModel m;
  m.dtype = d;
  m.tanh = tanh;
  ref::GeluConfig cfg;
  cfg.tanh = tanh;
  cfg.contraction = ref::Contraction::kFma;
  cfg.nan = ref::NanPolicy::kCudaCvtRn;
  std::optional<ref::MufuModel> mufu;
  if (tanh == ref::TanhModel::kCuda) {
    verify_mufu_tables(golden.dir, golden.build_dir, "sm_90");
    mufu.emplace(ref::MufuModel::load(golden.build_dir + "/sm_90"));
    cfg.mufu = &*mufu;
  }
  m.gelu_table = ref::gelu_tanh_table(d, cfg);
  m.golden_table = golden.dir + "/sm_90/gelu_tanh_" + ref::dtype_name(d) + ".bin";
  const std::vector<uint16_t> g = read_golden_gelu_table(golden.dir, "sm_90", d);
  m.golden_table_diffs = 0;
  for (size_t i = 0; i < g.size(); ++i) m.golden_table_diffs += g[i] != m.gelu_table[i];
  if (tanh == ref::TanhModel::kCuda && m.golden_table_diffs != 0)
    throw std::runtime_error("audit: the CUDA tanh model differs from " + m.golden_table + " at " +
                             std::to_string(m.golden_table_diffs) + " inputs; the oracle cannot be trusted");
  const auto digest = golden_digest(golden.dir, "sm_90", "bias_gelu_tanh", d);
  if (!digest)
    throw MissingDataError(golden.dir + "/sm_90/digests.json has no bias_gelu_tanh." + ref::dtype_name(d) + " digest");
  m.golden_digest = *digest;
  m.digest_applies = tanh == ref::TanhModel::kCuda;
  m.description = std::string("eager gelu(x + bias, approximate=\"tanh\") op by op in binary32 (reference/), tanh model ") +
                  ref::tanh_model_name(tanh) + ", FMA-contracted inner sum, NaN policy cuda-cvt-rn (0x7FFF); " +
                  (tanh == ref::TanhModel::kCuda
                       ? "GELU table equals " + m.golden_table + " at all 65536 inputs"
                       : "GELU table differs from the H200's " + m.golden_table + " at " +
                             std::to_string(m.golden_table_diffs) + " inputs (host tanhf)");
  return m;
}

}  // namespace fuseproof::audit
