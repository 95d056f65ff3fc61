// junit_xml.h: JUnit XML, the test-report format CI systems read (testsuites > testsuite > properties, testcase >
// failure | error | skipped), written from a small model by the audit and the e2e check.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fuseproof::junit {

/// What a testcase's child element says: none (a pass), <failure>, <error> or <skipped>.
enum class Outcome { kPass, kFailure, kError, kSkipped };

struct TestCase {
  std::string classname;  ///< "fuseproof.audit.bias_gelu_tanh.eager"
  std::string name;       ///< "extreme[bf16]"
  double seconds = 0;
  Outcome outcome = Outcome::kPass;
  std::string type;       ///< the failure's kind ("mismatch", "fault", "incomplete"); "" for a pass
  std::string message;    ///< one line: the attribute CI systems show first
  std::string text;       ///< the element's body: records, histograms, the reproduce command
  std::string system_out; ///< what was covered ("In N cases, no errors found ...")
};

/// A passing case; `out` says what it covered.
TestCase passed_case(std::string classname, std::string name, std::string out = "");
/// A failing case: `type` "mismatch", "fault" or "incomplete"; `message` one line; `text` the body.
TestCase failed_case(std::string classname, std::string name, std::string type, std::string message,
                     std::string text);
/// A skipped case with its reason.
TestCase skipped_case(std::string classname, std::string name, std::string reason);

struct TestSuite {
  std::string name;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<TestCase> cases;
  double seconds = 0;
};

/// Text safe in XML 1.0 content and attributes: & < > " ' escaped; tab, newline and carriage return kept in text and
/// written as character references in attributes; every other control character, each byte of invalid UTF-8, and
/// the code points XML 1.0 cannot hold (U+FFFE, U+FFFF, surrogates) written as the visible text `\xNN` (or `\u{N}`)
/// instead, since no character reference can carry them either.
std::string escape(std::string_view s, bool attribute);

/// `<?xml ...?><testsuites tests= failures= errors= skipped= time=>` and each suite, with the counts computed from
/// the cases.
std::string to_xml(const std::vector<TestSuite>& suites);

}  // namespace fuseproof::junit
