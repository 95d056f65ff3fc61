// quant_differences.cpp: the --differences file of a quantization op's stages class.
#include "audit/quant_differences.h"

#include <cinttypes>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/exit_status.h"
#include "common/sha256.h"

namespace fuseproof::audit {

namespace {

std::string hex(uint32_t v, int digits) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*" PRIX32, digits, v);
  return b;
}

std::optional<uint32_t> parse_hex(const std::string& s) {
  if (s.size() < 3 || s.size() > 10 || s[0] != '0' || s[1] != 'x') return std::nullopt;
  uint32_t v = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v << 4 | uint32_t(d);
  }
  return v;
}

}  // namespace

std::string difference_line_text(const DifferenceLine& l, int scale_digits) {
  std::string s = l.value ? hex(*l.value, 4) : "-";
  s += "\t" + hex(l.amax, 4) + "\t" + hex(l.other_amax, 4) + "\t";
  if (l.scalars.empty()) s += "-";
  for (size_t j = 0; j < l.scalars.size(); ++j) s += (j ? "," : "") + hex(l.scalars[j], 8);
  s += "\t" + hex(l.scale, scale_digits) + "\t" + (l.code ? hex(*l.code, 1) : "-");
  s += "\t" + hex(l.other_scale, scale_digits) + "\t" + (l.other_code ? hex(*l.other_code, 1) : "-");
  return s + "\t" + l.kind;
}

std::optional<DifferenceLine> parse_difference_line(const std::string& line) {
  std::vector<std::string> f;
  std::istringstream in(line);
  for (std::string x; std::getline(in, x, '\t');) f.push_back(x);
  if (f.size() != 9) return std::nullopt;
  DifferenceLine l;
  auto opt8 = [](const std::string& s, std::optional<uint8_t>& out) {
    if (s == "-") return true;
    const auto v = parse_hex(s);
    if (!v || *v > 0xFF) return false;
    out = uint8_t(*v);
    return true;
  };
  if (f[0] != "-") {
    const auto v = parse_hex(f[0]);
    if (!v || *v > 0xFFFF) return std::nullopt;
    l.value = uint16_t(*v);
  }
  const auto a = parse_hex(f[1]);
  if (!a || *a > 0xFFFF) return std::nullopt;
  const auto oa = parse_hex(f[2]);
  if (!oa || *oa > 0xFFFF) return std::nullopt;
  l.amax = uint16_t(*a);
  l.other_amax = uint16_t(*oa);
  if (f[3] != "-") {
    std::istringstream sc(f[3]);
    for (std::string x; std::getline(sc, x, ',');) {
      const auto v = parse_hex(x);
      if (!v) return std::nullopt;
      l.scalars.push_back(*v);
    }
  }
  const auto s = parse_hex(f[4]), so = parse_hex(f[6]);
  if (!s || !so || !opt8(f[5], l.code) || !opt8(f[7], l.other_code) || f[8].empty()) return std::nullopt;
  l.scale = *s;
  l.other_scale = *so;
  l.kind = f[8];
  return l;
}

DifferencesFile::DifferencesFile(const std::string& dir, const std::string& name)
    : path_((std::filesystem::path(dir) / name).string()) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto st = std::filesystem::symlink_status(path_, ec);
  if (std::filesystem::exists(st) && st.type() != std::filesystem::file_type::regular)
    throw UsageError("audit: --differences file " + path_ + " exists and is not a regular file");
  body_ = std::tmpfile();
  if (!body_) throw std::runtime_error("audit: --differences: no temporary file for " + path_);
}

DifferencesFile::~DifferencesFile() {
  if (body_) std::fclose(body_);
}

void DifferencesFile::add(const std::string& line) {
  if (std::fwrite(line.data(), 1, line.size(), body_) != line.size() || std::fputc('\n', body_) == EOF)
    throw std::runtime_error("audit: --differences: writing the lines of " + path_ + " failed");
  ++lines_;
}

std::string DifferencesFile::finish(const std::string& header) {
  AtomicFile out(path_);
  Sha256 sha;
  const std::string head = header + "\n";
  out.write(head);
  sha.update(head.data(), head.size());
  if (std::fflush(body_) != 0 || std::fseek(body_, 0, SEEK_SET) != 0)
    throw std::runtime_error("audit: --differences: reading back the lines of " + path_ + " failed");
  std::vector<char> buf(size_t(1) << 20);
  for (size_t got; (got = std::fread(buf.data(), 1, buf.size(), body_)) > 0;) {
    out.write(buf.data(), got);
    sha.update(buf.data(), got);
  }
  if (std::ferror(body_)) throw std::runtime_error("audit: --differences: reading back the lines of " + path_ + " failed");
  out.commit();
  return sha.hex();
}

}  // namespace fuseproof::audit
