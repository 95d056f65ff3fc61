// quant_report.cpp: the Markdown of the distances from a quantization op's other contracts.
#include "audit/quant_report.h"

#include "audit/audit_report.h"

#include <sstream>

namespace fuseproof::audit {

std::string steps_text(const std::vector<std::pair<int, uint64_t>>& steps) {
  if (steps.empty()) return "none";
  // The first kShown distances one by one, the rest as one range (the JSON keeps every bucket).
  constexpr size_t kShown = 8;
  std::string s;
  for (size_t i = 0; i < steps.size() && i < kShown; ++i)
    s += (s.empty() ? "" : ", ") + std::to_string(steps[i].first) + ": " + std::to_string(steps[i].second);
  if (steps.size() > kShown) {
    uint64_t rest = 0;
    for (size_t i = kShown; i < steps.size(); ++i) rest += steps[i].second;
    s += ", " + std::to_string(steps[kShown].first) + ".." + std::to_string(steps.back().first) + ": " +
         std::to_string(rest);
  }
  return s;
}

std::string contract_distances_markdown(const CheckResult& c, const std::string& claimed, size_t max_pairs) {
  if (c.contract_distances.empty()) return "";
  std::ostringstream md;
  md << "\n### Distance from the other contracts (" << check_class_name(c.cls) << " " << ref::dtype_name(c.dtype)
     << ")\n\n";
  md << "The subject" << (claimed.empty() ? std::string() : " (claiming `" + claimed + "`)")
     << " against each other contract of the op over the class's cases. "
        "Steps count along the format's magnitude order (E2M1 0..7, E4M3 0..126; binary32 scales in units in the last "
        "place).\n\n";
  md << "| contract | elements | codes differ | code steps (steps: elements) | blocks | scales differ | scale steps "
        "(steps: blocks) | NaN/Inf differ | sign of zero differs | differing inputs |\n"
        "|---|---:|---:|---|---:|---:|---|---:|---:|---:|\n";
  for (const ContractDistance& d : c.contract_distances)
    md << "| `" << d.contract << "` | " << d.cases << " | " << d.codes_differ << " | " << steps_text(d.code_steps)
       << " | " << d.blocks << " | " << d.scales_differ << " | " << steps_text(d.scale_steps) << " | "
       << d.nan_inf_differ << " | " << d.sign_of_zero_differ << " | " << d.pairs_total << " |\n";
  for (const ContractDistance& d : c.contract_distances)
    if (!d.differences_path.empty())
      md << "\nEvery input where the subject and `" << d.contract << "` differ: `" << d.differences_path << "` ("
         << d.differences_lines << " lines after its header, SHA-256 " << d.differences_sha256 << ").\n";
  for (const ContractDistance& d : c.contract_distances) {
    if (d.pairs.empty()) continue;
    md << "\nWhere the subject and `" << d.contract << "` differ (" << d.pairs_total
       << " distinct (value, scale, scalars) inputs";
    if (d.pairs_total > d.pairs.size()) md << "; " << d.pairs.size() << " kept, finite ones first";
    md << "):\n\n```\n";
    const size_t shown = std::min(max_pairs, d.pairs.size());
    for (size_t i = 0; i < shown; ++i) md << d.pairs[i] << "\n";
    if (d.pairs_total > shown) md << "... and " << (d.pairs_total - shown) << " more\n";
    md << "```\n";
  }
  return md.str();
}

std::vector<std::string> contract_distance_lines(const CheckResult& r) {
  std::vector<std::string> lines;
  std::istringstream in(contract_distances_markdown(r, ""));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
  return lines;
}

}  // namespace fuseproof::audit
