// stages_command.cpp: the stages of an op's contract written out: stage<k>.json (what the stage is, its neutral
// inputs, its operands, the canonical order of its pairs) and stage<k>_a.bin / stage<k>_b.bin (each operand's
// witness inputs), from which a capture script composes the op's inputs for every pair.
#include "cli/stages_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/exit_status.h"
#include "common/sha256.h"
#include "common/tree_digest.h"
#include "reference/op_plan.h"

namespace fuseproof::cli {

namespace {

struct StagesArgs {
  std::string op;
  std::string dtype;
  std::string contract = "eager";
  std::string out;
  bool digests = false;
};

/// The analysis of a composition without activations needs no transcendental maths; the NaN policy is the device's,
/// whose canonical NaN is the one pattern a rounding gives.
ref::MathConfig stages_config() {
  ref::MathConfig cfg;
  cfg.math = ref::MathModel::kLibm;
  cfg.nan = ref::NanPolicy::kCudaCvtRn;
  return cfg;
}

std::string hex4(uint16_t h) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04X", h);
  return b;
}

/// values.size() records of n_inputs little-endian uint16: each witness, the neutral inputs filled in.
std::string witness_bytes(const ref::Stage::Operand& o, int n_inputs) {
  std::string bytes;
  bytes.reserve(o.witness.size() * size_t(n_inputs) * 2);
  for (const auto& w : o.witness)
    for (int i = 0; i < n_inputs; ++i) {
      bytes.push_back(char(w[size_t(i)] & 0xFF));
      bytes.push_back(char(w[size_t(i)] >> 8));
    }
  return bytes;
}

int run(const StagesArgs& a) {
  const ref::OpSpec* op = ref::find_op(a.op);
  if (!op) throw UsageError("stages: unknown --op " + a.op + " (" + ref::op_names() + ")");
  const auto contract = ref::parse_contract(a.contract);
  if (!contract || !op->contract(*contract)) throw UsageError("stages: op " + a.op + " has no contract " + a.contract);
  const ref::Dtype d = *ref::parse_dtype(a.dtype);
  const ref::OpPlan plan(*op, *contract, d, stages_config());
  const auto& stages = plan.stages();
  if (stages.empty())
    throw UsageError("stages: " + op->name + " " + a.contract + " has no stages: " + plan.no_stages_reason());
  // An activation would make the witnesses depend on the math model; the files are for the device's golden data.
  for (const ref::Node& n : op->contract(*contract)->nodes)
    if (n.op == ref::NodeOp::kActivation)
      throw UsageError("stages: " + op->name + " " + a.contract + " has an activation; its stages would depend on the "
                       "math model, which this command does not take");
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec || !std::filesystem::is_directory(a.out))
    throw UsageError("stages: cannot create --out " + a.out + ": " + (ec ? ec.message() : "not a directory"));
  const int n_in = plan.inputs();
  std::vector<std::string> names;
  for (const ref::InputSpec& in : op->inputs) names.push_back(in.name);
  for (size_t k = 0; k < stages.size(); ++k) {
    const ref::Stage& s = stages[k];
    const std::string stem = "stage" + std::to_string(k);
    nlohmann::json neutral = nlohmann::json::object();
    for (int i = 0; i < n_in; ++i)
      if (!((s.a.depends | s.b.depends) >> i & 1u)) neutral[names[size_t(i)]] = hex4(s.neutral[size_t(i)]);
    auto operand = [&](const ref::Stage::Operand& o, const char* side) {
      const std::string file = stem + "_" + side + ".bin", bytes = witness_bytes(o, n_in);
      try {
        write_file_atomically((std::filesystem::path(a.out) / file).string(), bytes);
      } catch (const std::exception& e) {
        throw UsageError(std::string("stages: --out: ") + e.what());
      }
      return nlohmann::json{{"text", o.text},
                            {"node", o.node},
                            {"depends", o.depends},
                            {"varies", o.varies},
                            {"values", o.values.size()},
                            {"how", o.how},
                            {"file", file},
                            {"sha256", Sha256::of(bytes.data(), bytes.size())}};
    };
    nlohmann::json j = {
        {"schema", "fuseproof.stage/1"},
        {"op", op->name},
        {"dtype", ref::dtype_name(d)},
        {"contract", a.contract},
        {"stage", k},
        {"stages", stages.size()},
        {"node", s.node},
        {"text", s.text},
        {"combine", s.combine == ref::Combine::kAdd ? "add" : "mul"},
        {"inputs", names},
        {"neutral", neutral},
        {"neutral_text", s.neutral_text},
        {"a", operand(s.a, "a")},
        {"b", operand(s.b, "b")},
        {"a_depends", s.a.depends},
        {"b_depends", s.b.depends},
        {"pairs", s.pairs()},
        {"record", stem + "_a.bin holds a.values records, " + stem + "_b.bin b.values records, each " +
                       std::to_string(n_in) + " little-endian uint16: the op's inputs in declared order giving the "
                       "operand's k-th value (ascending patterns), the neutral inputs filled in"},
        {"compose", "the inputs of pair (ia, ib) are record ia of " + stem + "_a.bin with every input i whose bit is "
                    "set in b_depends replaced by input i of record ib of " + stem + "_b.bin"},
        {"order", "canonical: b outer, a inner; pair p = ib * a.values + ia for ia < a.values, ib < b.values"},
        {"reference", "nan=cuda-cvt-rn: a rounding's NaN is 0x7FFF, so each operand takes NaN as one value"}};
    if (a.digests) {
      // The reference's outputs over every pair (OpPlan::stage_row, the stages class's table rows): the flat SHA-256
      // of golden's "<key>.stage<k>" and the tree digest of "<key>.stage<k>_tree" (a row per b value, its a.values
      // outputs; common/tree_digest.h).
      const size_t na = s.a.values.size(), nb = s.b.values.size();
      DomainDigests dg(true, true, na);
      SweepOptions so;
      so.bias_count = uint32_t(nb);
      sweep_domain([&](uint16_t ib, uint16_t* o) { plan.stage_row(s, ib, o); },
                   [&](uint32_t, uint32_t count, const uint16_t* rows) { dg.update(rows, count); }, so);
      j["reference_digests"] = {{"sha256", dg.flat_hex()}, {"tree", dg.tree_hex()}, {"pairs", s.pairs()},
                                {"how", "OpPlan::stage_row over every pair in canonical order; tree: hex SHA-256 of "
                                        "each b row's a.values outputs, then SHA-256 of those 64-character digests "
                                        "in b order"}};
      std::printf("%s %s %s stage %zu reference sha256 %s tree %s\n", op->name.c_str(), ref::dtype_name(d),
                  a.contract.c_str(), k, j["reference_digests"]["sha256"].get<std::string>().c_str(),
                  j["reference_digests"]["tree"].get<std::string>().c_str());
    }
    try {
      write_file_atomically((std::filesystem::path(a.out) / (stem + ".json")).string(), j.dump(2) + "\n");
    } catch (const std::exception& e) {
      throw UsageError(std::string("stages: --out: ") + e.what());
    }
    std::printf("%s %s %s stage %zu %s: %zu x %zu = %llu pairs; %s\n", op->name.c_str(), ref::dtype_name(d),
                a.contract.c_str(), k, s.text.c_str(), s.a.values.size(), s.b.values.size(),
                static_cast<unsigned long long>(s.pairs()), s.neutral_text.c_str());
  }
  std::fprintf(stderr, "stages: %zu stages of %s %s %s -> %s\n", stages.size(), op->name.c_str(), ref::dtype_name(d),
               a.contract.c_str(), a.out.c_str());
  return 0;
}

}  // namespace

void add_stages_command(CLI::App& app) {
  auto a = std::make_shared<StagesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "stages", "Write each rounding boundary of a 3-input op with its operands' witness inputs (for the golden capture)");
  cmd->add_option("--op", a->op, "an op of `fuseproof ops` with 3 or more inputs")->required();
  cmd->add_option("--dtype", a->dtype, "bf16 or fp16")->required()->check(CLI::IsMember({"bf16", "fp16"}));
  cmd->add_option("--contract", a->contract, "a contract of the op with stages")->capture_default_str();
  cmd->add_option("--out", a->out, "folder for stage<k>.json, stage<k>_a.bin, stage<k>_b.bin")->required();
  cmd->add_flag("--digests", a->digests,
                "also the reference's digests of each stage over all its pairs (flat SHA-256 and tree), into "
                "stage<k>.json's reference_digests: seconds a stage on 16 cores");
  cmd->final_callback([a] { throw CLI::RuntimeError(run(*a)); });
}

}  // namespace fuseproof::cli
