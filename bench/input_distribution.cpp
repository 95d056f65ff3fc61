// input_distribution.cpp: distribution names, selection, sample files, the host fill.
#include "bench/input_distribution.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "bench/input_element.h"
#include "common/exit_status.h"
#include "common/path_inside.h"
#include "common/quoted_value.h"
#include "kernels/half_convert.h"

namespace fuseproof::bench {

namespace {

struct Builtin {
  const char* name;
  DistKind kind;
  float sigma;
};
constexpr Builtin kBuiltins[] = {{"normal0.25", DistKind::kNormal, 0.25f}, {"normal1", DistKind::kNormal, 1.0f},
                                 {"normal4", DistKind::kNormal, 4.0f},     {"normal16", DistKind::kNormal, 16.0f},
                                 {"uniform16", DistKind::kUniform16, 0.0f}, {"e2e", DistKind::kSample, 0.0f}};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

/// ROWSxWIDTH, both positive; throws naming --input-shape.
void parse_shape(const std::string& s, int64_t* rows, int64_t* width) {
  const size_t x = s.find('x');
  try {
    size_t ur = 0, uw = 0;
    if (x == std::string::npos) throw std::invalid_argument(s);
    *rows = std::stoll(s.substr(0, x), &ur);
    *width = std::stoll(s.substr(x + 1), &uw);
    if (*rows <= 0 || *width <= 0 || ur != x || uw != s.size() - x - 1) throw std::invalid_argument(s);
  } catch (const std::exception&) {
    throw std::runtime_error("bench: --input-shape must be ROWSxWIDTH with both positive, got " + s);
  }
}

Distribution load_e2e(const std::string& dir) {
  const std::string manifest = dir + "/" + kFfnCaptureManifest;
  std::ifstream f(manifest);
  if (!f) throw std::runtime_error("bench: --e2e-capture must name a folder holding " + std::string(kFfnCaptureManifest) + ", got " + dir);
  nlohmann::json j;
  try {
    f >> j;
    Distribution d;
    d.name = "e2e";
    d.kind = DistKind::kSample;
    d.sample_dtype = j.at("dtype").get<std::string>();
    if (d.sample_dtype != "bf16" && d.sample_dtype != "fp16")
      throw std::runtime_error("bench: --e2e-capture " + manifest + " dtype must be bf16 or fp16, got " + d.sample_dtype);
    const int64_t rows = j.at("rows").get<int64_t>(), width = j.at("width").get<int64_t>();
    // The manifest names its sample files: they must lie in the capture folder (a path out of it is corrupt data).
    const auto inside = [&](const char* key) {
      const std::string name = j.at(key).get<std::string>();
      const auto p = path_inside(dir, name);
      if (!p)
        throw CorruptDataError("bench: --e2e-capture " + manifest + ": " + key + " must name a file inside " + dir +
                               ", got " + quoted_value(name));
      return *p;
    };
    d.x_sample = read_raw16(inside("x"), rows * width, "--e2e-capture x");
    d.bias_sample = read_raw16(inside("bias"), width, "--e2e-capture bias");
    d.source = manifest + " (" + j.at("site").get<std::string>() + ", " + std::to_string(rows) + "x" +
               std::to_string(width) + " " + j.at("dtype").get<std::string>() + ")";
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("bench: --e2e-capture " + manifest + " is not a capture manifest: " + e.what());
  }
}

}  // namespace

const std::vector<std::string>& builtin_distribution_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Builtin& b : kBuiltins) v.push_back(b.name);
    return v;
  }();
  return names;
}

std::vector<uint16_t> read_raw16(const std::string& path, int64_t n, const std::string& option) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error("bench: " + option + " must name a readable file, got " + path);
  const int64_t bytes = int64_t(f.tellg());
  if (bytes != 2 * n)
    throw std::runtime_error("bench: " + option + " " + path + " must hold " + std::to_string(2 * n) + " bytes (" +
                             std::to_string(n) + " 16-bit elements), got " + std::to_string(bytes));
  std::vector<uint16_t> v(static_cast<size_t>(n));
  f.seekg(0);
  std::vector<unsigned char> raw(static_cast<size_t>(bytes));
  f.read(reinterpret_cast<char*>(raw.data()), bytes);
  if (!f) throw std::runtime_error("bench: " + option + " " + path + ": read failed");
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint16_t(raw[2 * i] | (raw[2 * i + 1] << 8));  // little-endian
  return v;
}

std::vector<Distribution> resolve_distributions(const BenchOptions& o, std::vector<std::string>* notes) {
  if (o.input_file.empty() != o.input_shape.empty())
    throw std::runtime_error(o.input_file.empty() ? "bench: --input-shape needs --input FILE, got none"
                                                  : "bench: --input needs --input-shape ROWSxWIDTH, got none");
  const bool defaulted = o.dists.empty();
  const std::vector<std::string>& names = defaulted ? builtin_distribution_names() : o.dists;
  std::vector<Distribution> out;
  for (const std::string& n : names) {
    const Builtin* b = nullptr;
    for (const Builtin& k : kBuiltins)
      if (n == k.name) b = &k;
    if (!b)
      throw std::runtime_error("bench: --dist entries must be one of " + join(builtin_distribution_names()) +
                               ", got " + n);
    if (std::any_of(out.begin(), out.end(), [&](const Distribution& d) { return d.name == n; }))
      throw std::runtime_error("bench: --dist entries must differ, got " + n + " twice");
    if (b->kind == DistKind::kSample) {
      if (o.e2e_capture.empty()) {
        if (!defaulted)
          throw std::runtime_error("bench: --dist e2e needs --e2e-capture DIR (FUSEPROOF_CAPTURE_FFN=DIR fuseproof e2e "
                                   "run writes one), got none");
        if (notes) notes->push_back("e2e left out: no --e2e-capture DIR");
        continue;
      }
      out.push_back(load_e2e(o.e2e_capture));
      continue;
    }
    Distribution d;
    d.name = n;
    d.kind = b->kind;
    d.sigma = b->sigma;
    out.push_back(d);
  }
  if (!o.input_file.empty()) {
    int64_t rows = 0, width = 0;
    parse_shape(o.input_shape, &rows, &width);
    if (rows > (int64_t(1) << 40) / width)
      throw std::runtime_error("bench: --input-shape must hold at most 2^40 elements, got " + o.input_shape);
    Distribution d;
    d.name = "file";
    d.kind = DistKind::kSample;
    d.x_sample = read_raw16(o.input_file, rows * width, "--input");
    d.source = o.input_file + " (" + o.input_shape + ")";
    out.push_back(d);
  }
  return out;
}

std::vector<uint16_t> sample_patterns(const Distribution& d, bool bf16, bool bias) {
  std::vector<uint16_t> v = bias && !d.bias_sample.empty() ? d.bias_sample : d.x_sample;
  using kernel::Half;
  if (d.sample_dtype == "bf16" && !bf16)
    for (uint16_t& p : v) p = kernel::float_to_half_rn<Half::kFp16>(kernel::half_to_float<Half::kBf16>(p));
  if (d.sample_dtype == "fp16" && bf16)
    for (uint16_t& p : v) p = kernel::float_to_half_rn<Half::kBf16>(kernel::half_to_float<Half::kFp16>(p));
  return v;
}

nlohmann::json distribution_settings(const std::vector<Distribution>& dists) {
  nlohmann::json j = nlohmann::json::array();
  for (const Distribution& d : dists) {
    nlohmann::json e = {{"name", d.name}};
    if (d.kind == DistKind::kNormal) e["sigma"] = d.sigma;
    if (d.kind == DistKind::kSample) e["source"] = d.source;
    j.push_back(e);
  }
  return j;
}

int64_t sample_offset(uint64_t stream, int64_t m) {
  return stream == kBiasStream ? m / 2 : int64_t((stream * 7919u) % uint64_t(m));
}

void fill_host(uint16_t* dst, int64_t n, const Distribution& d, bool bf16, uint64_t seed, uint64_t stream) {
  switch (d.kind) {
    case DistKind::kUniform16:
      for (int64_t i = 0; i < n; ++i) dst[i] = uniform16_element(seed, stream, uint64_t(i));
      return;
    case DistKind::kNormal:
      for (int64_t i = 0; i < n; ++i) {
        const float z = normal_element(seed, stream, uint64_t(i), d.sigma);
        dst[i] = bf16 ? kernel::float_to_half_rn<kernel::Half::kBf16>(z) : kernel::float_to_half_rn<kernel::Half::kFp16>(z);
      }
      return;
    case DistKind::kSample: {
      const std::vector<uint16_t> s = sample_patterns(d, bf16, stream == kBiasStream);
      const int64_t m = int64_t(s.size());
      int64_t k = sample_offset(stream, m);
      for (int64_t i = 0; i < n; ++i, k = k + 1 == m ? 0 : k + 1) dst[i] = s[size_t(k)];
      return;
    }
  }
}

}  // namespace fuseproof::bench
