// junit_xml_test.cpp: the JUnit writer escapes everything XML 1.0 cannot hold, counts per suite, and what it writes
// parses with a real XML parser (expat, through python3) and a JUnit reader (junitparser) where one is installed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/junit_xml.h"

namespace fuseproof::junit {
namespace {

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Common_JunitXml, EscapesMarkupInTextAndAttributes) {
  EXPECT_EQ(escape("a<b>&\"c'", false), "a&lt;b&gt;&amp;\"c'");
  EXPECT_EQ(escape("a<b>&\"c'", true), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(escape("]]>", false), "]]&gt;");  // no CDATA to end early
}

TEST(Common_JunitXml, ControlCharactersAndBadUtf8BecomeVisibleText) {
  EXPECT_EQ(escape(std::string("x\x01y\x1b", 4), false), "x\\x01y\\x1B");
  EXPECT_EQ(escape(std::string("\0", 1), false), "\\x00");
  EXPECT_EQ(escape("line1\nline2\tt", false), "line1\nline2\tt");   // kept in text
  EXPECT_EQ(escape("line1\nline2\tt", true), "line1&#10;line2&#9;t");  // survive attribute normalisation
  EXPECT_EQ(escape("\r", false), "&#13;");
  EXPECT_EQ(escape("\xff\xfe", false), "\\xFF\\xFE");               // not UTF-8
  EXPECT_EQ(escape("\xc0\xaf", false), "\\xC0\\xAF");               // overlong '/'
  EXPECT_EQ(escape("\xed\xa0\x80", false), "\\xED\\xA0\\x80");      // a surrogate
  EXPECT_EQ(escape("\xef\xbf\xbf", false), "\\u{FFFF}");            // not an XML character
  EXPECT_EQ(escape("ulp \xe2\x89\xa4 1, \xf0\x9f\x98\x80", false), "ulp \xe2\x89\xa4 1, \xf0\x9f\x98\x80");  // kept
}

std::vector<TestSuite> hostile_suites() {
  TestSuite s;
  s.name = "fuseproof.audit.op<&>.eager";
  s.properties = {{"kernel", "k\"1\x02"}, {"device", "cpu\n(emulated)"}};
  TestCase pass{"c", "rejection[bf16]", 0.5, Outcome::kPass, "", "", "", "In 3 cases, no errors found."};
  TestCase fail{"c", "extreme[bf16]", 0.25, Outcome::kFailure, "mismatch", "x=0x3F80 => 0x0000 \x07 <]]>",
                "rec \x01\x7f\xff ]]> </failure>\nReproduce: a && b", ""};
  TestCase skip{"c", "pdl[bf16]", 0, Outcome::kSkipped, "", "host memory has no PDL", "", ""};
  TestCase err{"c", "load", 0, Outcome::kError, "fault", "crash", "", ""};
  s.cases = {pass, fail, skip, err};
  TestSuite empty;
  empty.name = "second";
  return {s, empty};
}

TEST(Common_JunitXml, CountsPerSuiteAndInTotal) {
  const std::string x = to_xml(hostile_suites());
  EXPECT_NE(x.find("<testsuites tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"0.000\">"), std::string::npos) << x;
  EXPECT_NE(x.find("<testsuite name=\"second\" tests=\"0\""), std::string::npos) << x;
  EXPECT_EQ(count_of(x, "<testcase "), 4u);
  EXPECT_EQ(count_of(x, "<failure "), 1u);
  EXPECT_EQ(count_of(x, "</failure>"), 1u);  // the record's own "</failure>" was escaped
  EXPECT_EQ(count_of(x, "<skipped "), 1u);
  for (char c = 1; c < 0x20; ++c)
    if (c != '\n' && c != '\t') EXPECT_EQ(x.find(c), std::string::npos) << "raw control character " << int(c);
}

// A real parser: expat (xml.etree) must accept the hostile document, and junitparser must read its cases back.
TEST(Common_JunitXml, HostileTextParsesWithARealParser) {
#ifndef FUSEPROOF_TEST_PYTHON
  GTEST_SKIP() << "no python3 configured";
#else
  const std::string path = ::testing::TempDir() + "junit_xml_test.xml";
  std::ofstream(path) << to_xml(hostile_suites());
  const std::string script =
      "import sys, xml.etree.ElementTree as E\n"
      "r = E.parse(sys.argv[1]).getroot()\n"
      "f = r.find('testsuite/testcase/failure')\n"
      "assert f.get('message') == 'x=0x3F80 => 0x0000 \\\\x07 <]]>', f.get('message')\n"
      "assert 'Reproduce: a && b' in f.text and '</failure>' in f.text, f.text\n"
      "p = {q.get('name'): q.get('value') for q in r.iter('property')}\n"
      "assert p['device'] == 'cpu\\n(emulated)', p\n"
      "try:\n"
      "    import junitparser\n"
      "except ImportError:\n"
      "    sys.exit(0)\n"
      "cases = [c for s in junitparser.JUnitXml.fromfile(sys.argv[1]) for c in s]\n"
      "assert [c.name for c in cases] == ['rejection[bf16]', 'extreme[bf16]', 'pdl[bf16]', 'load'], cases\n"
      "assert isinstance(cases[1].result[0], junitparser.Failure) and not cases[0].result\n";
  const std::string script_path = ::testing::TempDir() + "junit_xml_test.py";
  std::ofstream(script_path) << script;
  const std::string cmd = std::string(FUSEPROOF_TEST_PYTHON) + " " + script_path + " " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // Negative control: the same parser refuses a raw control character, so the check above can fail.
  std::ofstream(path) << "<?xml version=\"1.0\"?><testsuites><testsuite name=\"a\x01\"/></testsuites>";
  EXPECT_NE(std::system((cmd + " 2>/dev/null").c_str()), 0);
#endif
}

}  // namespace
}  // namespace fuseproof::junit
