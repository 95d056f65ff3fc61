// audit_options_test.cpp: tests audit/audit_options.h: every option of the table reaches the reproduce line when it
// differs from its default, survives the JSON round trip, and is refused in one line when out of range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "audit/audit_options.h"
#include "common/exit_status.h"

namespace fuseproof::audit {
namespace {

/// A value different from the default that the option's range accepts, as command-line text.
std::string other_value(const OptionDef& d, const AuditOptions& defaults) {
  if (auto* s = std::get_if<std::string AuditOptions::*>(&d.field)) {
    if (d.key == "shapes") return "2x64";
    if (d.key == "model") return "wan2.2";
    if (d.key == "contract") return "fp32";
    if (d.key == "math_model") return "exact";
    if (d.key == "arch") return "sm_100";
    if (d.key == "scope") return "quick";
    return defaults.**s + "x";
  }
  // The smallest accepted number, unless that is the default: then the next one.
  const double lo = double(d.min_open ? d.min + 1 : d.min);
  std::string text = std::to_string(uint64_t(lo));
  AuditOptions probe;
  std::visit([&](auto m) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(probe.*m)>>;
    if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>)
      if (double(defaults.*m) == lo) text = std::to_string(uint64_t(lo) + 1);
  }, d.field);
  return text;
}

TEST(Audit_Options, EveryReproducingOptionReachesTheReproduceLine) {
  const AuditOptions defaults;
  EXPECT_EQ(reproduce_options(defaults), "");  // the negative control: defaults add nothing
  int tried = 0;
  for (const OptionDef& d : option_table()) {
    if (!d.reproduce) continue;
    AuditOptions o;
    if (auto* b = std::get_if<bool AuditOptions::*>(&d.field)) {
      o.**b = !(defaults.**b);
      EXPECT_NE(reproduce_options(o).find(" " + d.flag), std::string::npos) << d.key;
    } else if (auto* s = std::get_if<std::string AuditOptions::*>(&d.field)) {
      o.**s = other_value(d, defaults);
      EXPECT_NE(reproduce_options(o).find(" " + d.flag + " " + o.**s), std::string::npos) << d.key;
    } else {
      // Numbers through the command-line path, so that the text is the one a user would type.
      const std::string text = other_value(d, defaults);
      std::vector<std::string> numbers(option_table().size());
      for (size_t i = 0; i < option_table().size(); ++i)
        if (option_table()[i].key == d.key) numbers[i] = text;
      apply_cli_options(o, numbers, {d.key});
      EXPECT_NE(reproduce_options(o).find(" " + d.flag + " " + text), std::string::npos)
          << d.key << ": " << reproduce_options(o);  // a double option was once left out (const T in a visitor)
    }
    EXPECT_EQ(reproduce_options(o, {d.key}), "") << d.key << ": `except` must leave it out";
    ++tried;
  }
  EXPECT_GE(tried, 15);
}

TEST(Audit_Options, JsonRoundTripKeepsEveryOption) {
  AuditOptions o;
  o.call_timeout_s = 7.5;
  o.max_width = 24;
  o.stop_after = 0;
  o.math_model = "exact";
  o.default_shapes = false;
  o.shapes = "2x64";
  const AuditOptions back = options_from_json(options_to_json(o));
  EXPECT_EQ(options_to_json(back), options_to_json(o));
  EXPECT_EQ(back.call_timeout_s, 7.5);
  EXPECT_EQ(back.extra_shapes.size(), 1u);
}

TEST(Audit_Options, OutOfRangeNumbersRefusedInOneLine) {
  for (const OptionDef& d : option_table()) {
    if (std::holds_alternative<std::string AuditOptions::*>(d.field) ||
        std::holds_alternative<bool AuditOptions::*>(d.field))
      continue;
    char above[64];
    std::snprintf(above, sizeof above, "%.0f", double(d.max) * 10 + 10);
    for (const std::string bad : {std::string("-1"), std::string("x"), std::string(above)}) {
      std::vector<std::string> numbers(option_table().size());
      for (size_t i = 0; i < option_table().size(); ++i)
        if (option_table()[i].key == d.key) numbers[i] = bad;
      AuditOptions o;
      try {
        apply_cli_options(o, numbers, {d.key});
        ADD_FAILURE() << d.flag << " " << bad << " was accepted";
      } catch (const UsageError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(d.flag), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      }
    }
  }
}

/// Values of a number option across its range, as the parser reads them: both ends and values between.
std::vector<std::string> values_across(const OptionDef& d) {
  if (std::holds_alternative<double AuditOptions::*>(d.field))
    return {"1", "1.5", "0.1e1", "2.0000000000000004", "33.333333333333336", "86399.99999999999", "86400"};
  char lo[32], hi[32], mid[32];
  std::snprintf(lo, sizeof lo, "%.0Lf", d.min);
  std::snprintf(hi, sizeof hi, "%.0Lf", d.max);
  std::snprintf(mid, sizeof mid, "%.0Lf", d.min + (d.max - d.min) / 3);
  return {lo, mid, hi};
}

TEST(Audit_Options, NumbersRoundTripThroughTheirText) {
  int tried = 0;
  for (const OptionDef& d : option_table()) {
    if (std::holds_alternative<std::string AuditOptions::*>(d.field) ||
        std::holds_alternative<bool AuditOptions::*>(d.field))
      continue;
    for (const std::string& text : values_across(d)) {
      AuditOptions o;
      set_option_number(o, d, text);
      const std::string shown = option_number_text(o, d);
      AuditOptions back;
      ASSERT_NO_THROW(set_option_number(back, d, shown)) << d.flag << " " << text << " printed as " << shown;
      EXPECT_EQ(options_to_json(back), options_to_json(o)) << d.flag << " " << text << " printed as " << shown;
      ++tried;
    }
  }
  EXPECT_GE(tried, 30);
}

TEST(Audit_Options, IntegerBoundsAreExact) {
  const auto seed = std::find_if(option_table().begin(), option_table().end(),
                                 [](const OptionDef& d) { return d.key == "seed"; });
  ASSERT_NE(seed, option_table().end());
  AuditOptions o;
  set_option_number(o, *seed, "18446744073709551615");
  EXPECT_EQ(o.seed, UINT64_MAX);
  for (const std::string bad : {"18446744073709551616", "-1", "-0", "+5", " 5", "5 ", "0x10", "1e3", ""}) {
    try {
      set_option_number(o, *seed, bad);
      ADD_FAILURE() << "--seed " << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "audit: --seed: must be an integer in [0, 18446744073709551615], got '" + bad + "'");
    }
  }
}

TEST(Audit_Options, CallTimeoutTheWatchdogCannotHonourIsRefused) {
  const auto ct = std::find_if(option_table().begin(), option_table().end(),
                               [](const OptionDef& d) { return d.key == "call_timeout"; });
  ASSERT_NE(ct, option_table().end());
  AuditOptions o;
  EXPECT_THROW(set_option_number(o, *ct, "1e-9"), UsageError);
  EXPECT_THROW(set_option_number(o, *ct, "0.5"), UsageError);
  EXPECT_NO_THROW(set_option_number(o, *ct, "1"));  // the control
}

TEST(Audit_Options, ScopeSetsWhatWasNotGiven) {
  AuditOptions o;
  o.scope = "mutant";
  o.max_width = 777;
  apply_scope(o, {"max_width"});
  EXPECT_EQ(o.max_width, 777);  // given on the command line: the scope leaves it
  EXPECT_EQ(o.domain_biases, 2048u);
  EXPECT_EQ(o.shapes, "65537x64,155345x13824");
  EXPECT_FALSE(o.default_shapes);
  EXPECT_TRUE(o.first_fail);
  EXPECT_EQ(o.call_timeout_s, 10.0);
  // The same through the command-line path: the scope's values reach the reproduce line, so a child or a rerun
  // needs no scope table to see them.
  AuditOptions cli;
  cli.scope = "quick";
  apply_cli_options(cli, std::vector<std::string>(option_table().size()), {"scope"});
  const std::string line = reproduce_options(cli);
  EXPECT_NE(line.find(" --max-width 2048"), std::string::npos) << line;
  EXPECT_NE(line.find(" --domain-biases 64"), std::string::npos) << line;
  EXPECT_NE(line.find(" --no-default-shapes"), std::string::npos) << line;
}

TEST(Audit_Options, EveryScopeNamesOptionsOfTheTable) {
  const nlohmann::json defaults = options_to_json(AuditOptions());
  for (const ScopeDef& scope : scope_table()) {
    AuditOptions o;
    o.scope = scope.name;
    ASSERT_NO_THROW(apply_scope(o, {})) << scope.name;
    ASSERT_NO_THROW(resolve_options(o)) << scope.name;
    nlohmann::json j = options_to_json(o), d = defaults;
    j.erase("scope");
    d.erase("scope");
    // "default" changes nothing (the control); every other scope changes exactly what it lists.
    if (scope.settings.empty()) {
      EXPECT_EQ(j, d) << scope.name;
    } else {
      size_t changed = 0;
      for (const auto& item : j.items()) changed += item.value() != d[item.key()];
      EXPECT_GE(changed, 1u) << scope.name;
      EXPECT_LE(changed, scope.settings.size()) << scope.name;
    }
  }
}

TEST(Audit_Options, UnknownScopeRefusedInOneLine) {
  AuditOptions o;
  o.scope = "fast";
  try {
    apply_scope(o, {});
    FAIL() << "no refusal";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "audit: unknown --scope fast (quick, mutant, default, envelope)");
  }
  EXPECT_THROW(resolve_options(o), UsageError);  // a child spec with a foreign scope is refused too
}

// --differences names a directory: a symbolic link (even to a directory) and a device node are refused in one line;
// an absent path is accepted (the stages class creates it) and so is a directory.
TEST(Audit_Options, DifferencesRefusesLinksAndDevicesInOneLine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "fuseproof_differences_option";
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  fs::create_directory_symlink(dir / "real", dir / "link");
  auto refusal = [](const std::string& path) -> std::string {
    AuditOptions o;
    o.differences = path;
    try {
      resolve_options(o);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refusal((dir / "link").string()),
            "audit: --differences must name a directory, not a symbolic link, got " + (dir / "link").string());
  EXPECT_EQ(refusal("/dev/null"), "audit: --differences must name a directory, got /dev/null");
  EXPECT_EQ(refusal((dir / "real").string()), "");  // the negative control
  EXPECT_EQ(refusal((dir / "absent").string()), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fuseproof::audit
