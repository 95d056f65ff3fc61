// fuzz_golden_json.cpp: the golden JSON loaders on mutated files: golden/<arch>/digests.json and provenance.json
// through common/golden_library.h (GoldenArch::digest, the key of every op and contract) (the input signed into the provenance, so that verification passes and the parser is
// reached; then the input as the provenance itself), and the e2e golden (golden/e2e/<arch>.json) and run manifest
// through e2e/golden_check.h. Every input gives a digest, nothing, or a one-line error; the e2e gates never PASS a
// golden that is not the run's.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/golden_library.h"
#include "reference/op_spec.h"
#include "common/sha256.h"
#include "golden_check.h"
#include "run_manifest.h"

namespace {

std::string g_golden_dir;  // a private golden/ with one architecture, sm_90, whose digests.json is the input

nlohmann::json frames(const char* first_hash) {
  return {{"frames", 2}, {"width", 4}, {"height", 2}, {"frame_sha256", {first_hash, std::string(64, 'b')}}};
}

/// A run whose own gates pass: high == high-eager, lossless differs.
const nlohmann::json& valid_run() {
  static const nlohmann::json run = {
      {"schema", fuseproof::e2e::kRunSchema},
      {"config", {{"name", "fuzz"}, {"frames", 2}}},
      {"runs", {{"lossless", frames("1111")}, {"high", frames("2222")}, {"high-eager", frames("2222")}}}};
  return run;
}

void one_line(const std::exception& e) {
  const std::string m = e.what();
  if (m.empty() || m.find('\n') != std::string::npos) __builtin_trap();
}

void write(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
}

void read_digests() {
  const fuseproof::GoldenArch g(g_golden_dir, g_golden_dir + "/build", "sm_90");
  std::vector<std::string> keys = {"add_round", "add_round_tree"};
  for (const auto& op : fuseproof::ref::op_registry())
    for (const auto& c : op.contracts) {
      keys.push_back(fuseproof::golden_digest_key(op.name, c.contract));
      keys.push_back(keys.back() + "_tree");
    }
  for (const std::string& key : keys) {
    for (auto d : {fuseproof::ref::Dtype::kBf16, fuseproof::ref::Dtype::kFp16}) {
      try {
        (void)g.digest(key, d);
      } catch (const std::exception& e) {
        one_line(e);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/fuzz_golden_json.XXXXXX";
  if (!::mkdtemp(tmpl)) __builtin_trap();
  g_golden_dir = tmpl;
  if (::mkdir((g_golden_dir + "/sm_90").c_str(), 0755) != 0) __builtin_trap();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = g_golden_dir + "/sm_90";
  // 1. The input as digests.json, signed into a valid provenance.
  write(dir + "/digests.json", data, size);
  const nlohmann::json prov = {{"arch", "sm_90"}, {"files", {{"digests.json", fuseproof::Sha256::of(data, size)}}}};
  const std::string prov_text = prov.dump();
  write(dir + "/provenance.json", prov_text.data(), prov_text.size());
  read_digests();
  // 2. The input as provenance.json, beside a fixed digests.json.
  static const std::string digests = R"({"bias_gelu_tanh": {"bf16": "00"}, "add_round": {"fp16": "11"}})";
  write(dir + "/digests.json", digests.data(), digests.size());
  write(dir + "/provenance.json", data, size);
  read_digests();
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  using fuseproof::e2e::check_run;
  using fuseproof::e2e::CheckOutcome;
  // As a golden file: a golden that is not this run's (another config, other hashes, malformed) must never PASS.
  const auto as_golden = check_run(valid_run(), &j);
  bool is_own_golden = false;
  try {
    is_own_golden = j.is_object() && j.value("schema", "") == fuseproof::e2e::kGoldenSchema &&
                    j.contains("config") && j["config"] == valid_run()["config"] && j.contains("high") &&
                    j["high"].is_object() &&
                    j["high"].value("frame_sha256", nlohmann::json()) == valid_run()["runs"]["high"]["frame_sha256"];
  } catch (const nlohmann::json::exception&) {
  }
  if (as_golden.outcome == CheckOutcome::kPass && !is_own_golden) __builtin_trap();
  // As a run manifest, with and without the golden made from the valid run.
  (void)check_run(j, nullptr);
  try {
    const nlohmann::json golden = fuseproof::e2e::make_golden(valid_run(), "sm_90", nullptr, nullptr, nullptr);
    (void)check_run(j, &golden);
    (void)fuseproof::e2e::make_golden(j, "sm_90", nullptr, nullptr, nullptr);
  } catch (const std::exception& e) {
    one_line(e);
  }
  return 0;
}
