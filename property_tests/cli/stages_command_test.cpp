// stages_command_test.cpp: tests cli/stages_command.cpp: `fuseproof stages` writes, for every stage of both 3-input
// ops and both dtypes, files from which the op's inputs of every pair compose exactly as Stage::inputs gives them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/fuseproof_app.h"
#include "common/cli_exit.h"
#include "common/sha256.h"
#include "reference/op_plan.h"

namespace fuseproof::cli {
namespace {

int run_app(std::vector<std::string> args) {
  args.insert(args.begin(), "fuseproof");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  const auto app = make_fuseproof_app();
  return parse_and_run(*app, int(argv.size()), argv.data());
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint16_t at(const std::string& bytes, size_t record, int i, int n_in) {
  const size_t o = (record * size_t(n_in) + size_t(i)) * 2;
  return uint16_t(uint8_t(bytes[o]) | uint8_t(bytes[o + 1]) << 8);
}

void files_compose_every_pair(const char* name, ref::Dtype d) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / (std::string("stages_") + name + "_" + ref::dtype_name(d));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(run_app({"stages", "--op", name, "--dtype", ref::dtype_name(d), "--out", dir.string()}), 0);
  ref::MathConfig cfg;
  cfg.math = ref::MathModel::kLibm;
  const ref::OpPlan plan(*ref::find_op(name), ref::Contract::kEager, d, cfg);
  const int n_in = plan.inputs();
  for (size_t k = 0; k < plan.stages().size(); ++k) {
    const ref::Stage& s = plan.stages()[k];
    const std::string stem = "stage" + std::to_string(k);
    const auto j = nlohmann::json::parse(slurp(dir / (stem + ".json")));
    EXPECT_EQ(j["text"], s.text);
    EXPECT_EQ(j["pairs"].get<uint64_t>(), s.pairs());
    EXPECT_EQ(j["a_depends"].get<uint32_t>(), s.a.depends);
    EXPECT_EQ(j["b_depends"].get<uint32_t>(), s.b.depends);
    EXPECT_EQ(j["a"]["values"].get<size_t>(), s.a.values.size());
    EXPECT_EQ(j["b"]["values"].get<size_t>(), s.b.values.size());
    EXPECT_EQ(j["neutral_text"], s.neutral_text);
    const std::string a = slurp(dir / (stem + "_a.bin")), b = slurp(dir / (stem + "_b.bin"));
    ASSERT_EQ(a.size(), s.a.values.size() * size_t(n_in) * 2) << stem;
    ASSERT_EQ(b.size(), s.b.values.size() * size_t(n_in) * 2) << stem;
    EXPECT_EQ(j["a"]["sha256"], Sha256::of(a.data(), a.size()));
    EXPECT_EQ(j["b"]["sha256"], Sha256::of(b.data(), b.size()));
    // The JSON's rule: record ia of a, with b's depends inputs from record ib of b. Every ia and every ib, each with
    // a seeded partner.
    const uint32_t b_depends = j["b_depends"].get<uint32_t>();
    uint64_t state = 11, bad = 0;
    auto check = [&](size_t ia, size_t ib) {
      const auto want = s.inputs(ia, ib);
      for (int i = 0; i < n_in; ++i) {
        const uint16_t got = b_depends >> i & 1u ? at(b, ib, i, n_in) : at(a, ia, i, n_in);
        bad += got != want[size_t(i)];
      }
    };
    auto next = [&](size_t n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return size_t((state >> 33) % n);
    };
    for (size_t ia = 0; ia < s.a.values.size(); ++ia) check(ia, next(s.b.values.size()));
    for (size_t ib = 0; ib < s.b.values.size(); ++ib) check(next(s.a.values.size()), ib);
    EXPECT_EQ(bad, 0u) << name << " " << ref::dtype_name(d) << " " << stem;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / ("stage" + std::to_string(plan.stages().size()) + ".json")));
}

TEST(Cli_Stages_bf16, FilesComposeEveryPair) {
  files_compose_every_pair("gated_residual", ref::Dtype::kBf16);
  files_compose_every_pair("modulate", ref::Dtype::kBf16);
}
TEST(Cli_Stages_fp16, FilesComposeEveryPair) {
  files_compose_every_pair("gated_residual", ref::Dtype::kFp16);
  files_compose_every_pair("modulate", ref::Dtype::kFp16);
}

}  // namespace
}  // namespace fuseproof::cli
