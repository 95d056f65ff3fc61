// junit_xml.cpp: the JUnit XML serializer and its XML 1.0 escaping. Hand-written: a generic XML writer escapes the
// five markup characters but passes control characters through (or as &#N; references, which XML 1.0 forbids too),
// and a kernel's fault text or a Python exception can carry any byte.
#include "common/junit_xml.h"

#include <utility>

#include <cstdint>
#include <cstdio>

namespace fuseproof::junit {

namespace {

void append_hex_byte(std::string& out, unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", b);
  out += buf;
}

/// The length of the well-formed UTF-8 sequence at s[i] and its code point, or 0 when it is malformed (overlong,
/// truncated, a surrogate, above U+10FFFF).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c >> 6) != 0x2) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

const char* outcome_element(Outcome o) {
  switch (o) {
    case Outcome::kFailure: return "failure";
    case Outcome::kError: return "error";
    case Outcome::kSkipped: return "skipped";
    case Outcome::kPass: break;
  }
  return "";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

std::string escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {  // not UTF-8: the byte, visibly
      append_hex_byte(out, static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (n > 1) {
      if (cp == 0xFFFE || cp == 0xFFFF) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u{%X}", static_cast<unsigned>(cp));
        out += buf;
      } else {
        out.append(s.substr(i, n));
      }
      i += n;
      continue;
    }
    const char c = s[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += attribute ? "&quot;" : "\""; break;
      case '\'': out += attribute ? "&apos;" : "'"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\r': out += "&#13;"; break;  // a literal CR would be normalised away by the parser
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) append_hex_byte(out, static_cast<unsigned char>(c));
        else out += c;
    }
  }
  return out;
}

std::string to_xml(const std::vector<TestSuite>& suites) {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string body;
  for (const TestSuite& suite : suites) {
    size_t f = 0, e = 0, sk = 0;
    for (const TestCase& c : suite.cases) {
      f += c.outcome == Outcome::kFailure;
      e += c.outcome == Outcome::kError;
      sk += c.outcome == Outcome::kSkipped;
    }
    tests += suite.cases.size();
    failures += f;
    errors += e;
    skipped += sk;
    seconds += suite.seconds;
    body += "  <testsuite name=\"" + escape(suite.name, true) + "\" tests=\"" + std::to_string(suite.cases.size()) +
            "\" failures=\"" + std::to_string(f) + "\" errors=\"" + std::to_string(e) + "\" skipped=\"" +
            std::to_string(sk) + "\" time=\"" + seconds_text(suite.seconds) + "\">\n";
    if (!suite.properties.empty()) {
      body += "    <properties>\n";
      for (const auto& [k, v] : suite.properties)
        body += "      <property name=\"" + escape(k, true) + "\" value=\"" + escape(v, true) + "\"/>\n";
      body += "    </properties>\n";
    }
    for (const TestCase& c : suite.cases) {
      body += "    <testcase classname=\"" + escape(c.classname, true) + "\" name=\"" + escape(c.name, true) +
              "\" time=\"" + seconds_text(c.seconds) + "\"";
      if (c.outcome == Outcome::kPass && c.system_out.empty()) {
        body += "/>\n";
        continue;
      }
      body += ">\n";
      if (c.outcome != Outcome::kPass) {
        body += std::string("      <") + outcome_element(c.outcome) + " message=\"" + escape(c.message, true) + "\"";
        if (!c.type.empty()) body += " type=\"" + escape(c.type, true) + "\"";
        if (c.text.empty()) body += "/>\n";
        else body += ">" + escape(c.text, false) + "</" + outcome_element(c.outcome) + ">\n";
      }
      if (!c.system_out.empty()) body += "      <system-out>" + escape(c.system_out, false) + "</system-out>\n";
      body += "    </testcase>\n";
    }
    body += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"" + std::to_string(tests) +
         "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" +
         std::to_string(skipped) + "\" time=\"" + seconds_text(seconds) + "\">\n" + body + "</testsuites>\n";
}

TestCase passed_case(std::string classname, std::string name, std::string out) {
  TestCase c;
  c.classname = std::move(classname);
  c.name = std::move(name);
  c.system_out = std::move(out);
  return c;
}

TestCase failed_case(std::string classname, std::string name, std::string type, std::string message,
                     std::string text) {
  TestCase c;
  c.classname = std::move(classname);
  c.name = std::move(name);
  c.outcome = Outcome::kFailure;
  c.type = std::move(type);
  c.message = std::move(message);
  c.text = std::move(text);
  return c;
}

TestCase skipped_case(std::string classname, std::string name, std::string reason) {
  TestCase c;
  c.classname = std::move(classname);
  c.name = std::move(name);
  c.outcome = Outcome::kSkipped;
  c.message = std::move(reason);
  return c;
}

}  // namespace fuseproof::junit
