// pipeline_config.cpp: the named configurations, their validation and JSON form.
#include "pipeline_config.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "nvfp4.h"

namespace fuseproof::e2e {

PipelineConfig small_config() {
  PipelineConfig c;
  c.name = "small";
  return c;
}

PipelineConfig default_config() {
  PipelineConfig c;
  c.name = "default";
  c.latent_height = 24;
  c.latent_width = 40;
  c.dim = 512;
  c.heads = 8;
  c.ffn_dim = 2048;
  c.blocks = 4;
  c.steps = 8;
  c.freq_dim = 256;
  return c;
}

PipelineConfig small_dit_config() {
  PipelineConfig c = small_config();
  c.name = "small-dit";
  c.dit_ops = true;
  return c;
}

PipelineConfig default_dit_config() {
  PipelineConfig c = default_config();
  c.name = "default-dit";
  c.dit_ops = true;
  return c;
}

PipelineConfig config_by_name(std::string_view name) {
  if (name == "small") return small_config();
  if (name == "default") return default_config();
  if (name == "small-dit") return small_dit_config();
  if (name == "default-dit") return default_dit_config();
  throw std::invalid_argument("config must be one of small, default, small-dit, default-dit, got '" + std::string(name) +
                              "'");
}

void validate(const PipelineConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("pipeline config: " + m); };
  if (c.latent_frames < 1) fail("latent_frames must be >= 1, got " + std::to_string(c.latent_frames));
  if (c.patch < 1 || c.latent_height % c.patch || c.latent_width % c.patch) {
    fail("patch must divide the latent height and width, got " + std::to_string(c.patch));
  }
  if (c.heads < 1 || c.dim % c.heads) fail("heads must divide dim (" + std::to_string(c.dim) + "), got " +
                                           std::to_string(c.heads));
  if (c.dim % kNvfp4BlockSize) fail("dim must be a multiple of 16 for NVFP4 fc_in blocks, got " + std::to_string(c.dim));
  if (c.freq_dim % 2) fail("freq_dim must be even, got " + std::to_string(c.freq_dim));
  if (c.blocks < 1 || c.steps < 1) fail("blocks and steps must be >= 1");
  if (!c.fc_in_bias.empty() && static_cast<int>(c.fc_in_bias.size()) != c.blocks) {
    fail("fc_in_bias must have one entry per block (" + std::to_string(c.blocks) + "), got " +
         std::to_string(c.fc_in_bias.size()));
  }
  if (c.dtype != "bf16" && c.dtype != "fp16") fail("dtype must be bf16 or fp16, got '" + c.dtype + "'");
  for (const std::string& name : c.nvfp4_exclude) {
    bool known = false;
    for (int b = 0; b < c.blocks; ++b) known |= name == "blocks." + std::to_string(b) + ".ffn.fc_in";
    if (!known) fail("nvfp4_exclude must name FFN fc_in linears (blocks.<i>.ffn.fc_in), got '" + name + "'");
  }
  if (c.fc_out_nvfp4_input) {
    if (c.ffn_dim % kNvfp4BlockSize)
      fail("ffn_dim must be a multiple of 16 for NVFP4 fc_out input blocks, got " + std::to_string(c.ffn_dim));
    const float g = c.fc_out_input_global_scale;
    if (!(std::isfinite(g) && g > 0.0f)) {
      std::ostringstream v;
      v << g;
      fail("fc_out_input_global_scale must be a positive finite float, got " + v.str());
    }
  }
}

nlohmann::json to_json(const PipelineConfig& c) {
  nlohmann::json j = {
      {"name", c.name}, {"seed", c.seed}, {"latent_channels", c.latent_channels}, {"latent_frames", c.latent_frames},
      {"latent_height", c.latent_height}, {"latent_width", c.latent_width}, {"patch", c.patch}, {"dim", c.dim},
      {"heads", c.heads}, {"ffn_dim", c.ffn_dim}, {"blocks", c.blocks}, {"steps", c.steps}, {"freq_dim", c.freq_dim},
      {"flow_shift", c.flow_shift}, {"vae_spatial", c.vae_spatial}, {"vae_temporal", c.vae_temporal}, {"fps", c.fps},
      {"frames", c.output_frames()}, {"width", c.output_width()}, {"height", c.output_height()}};
  if (!c.fc_in_bias.empty()) j["fc_in_bias"] = c.fc_in_bias;
  if (c.dtype != "bf16") j["dtype"] = c.dtype;
  if (!c.nvfp4_exclude.empty()) j["nvfp4_exclude"] = c.nvfp4_exclude;
  if (c.dit_ops) j["dit_ops"] = true;
  if (c.fc_out_nvfp4_input) {
    j["fc_out_nvfp4_input"] = true;
    j["fc_out_input_global_scale"] = c.fc_out_input_global_scale;
  }
  return j;
}

const char* quality_name(Quality q) {
  switch (q) {
    case Quality::kLossless: return "lossless";
    case Quality::kHigh: return "high";
    case Quality::kHighEager: return "high-eager";
  }
  return "?";
}

Quality parse_quality(std::string_view name) {
  for (Quality q : {Quality::kLossless, Quality::kHigh, Quality::kHighEager}) {
    if (name == quality_name(q)) return q;
  }
  throw std::invalid_argument("mode must be one of lossless, high, high-eager, got '" + std::string(name) + "'");
}

}  // namespace fuseproof::e2e
