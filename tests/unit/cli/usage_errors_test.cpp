// Usage errors: readable seconds checks and one-line messages (exit codes are checked
// against build/eacgm in tests/integration/usage_errors_test.cpp).
#include "cli/usage_errors.h"

#include <gtest/gtest.h>

namespace eacgm::cli {
namespace {

std::string check(const CLI::Validator& v, std::string value) { return v(value); }

TEST(SecondsValidator, AcceptsSecondsAndSaysWhatIsWrongBriefly) {
  const auto duration = seconds_validator(true, " (0: no limit)");
  EXPECT_EQ(check(duration, "0"), "");
  EXPECT_EQ(check(duration, "2.5"), "");
  EXPECT_EQ(check(duration, "abc"), "\"abc\" is not a number of seconds; use 0 or more (0: no limit)");
  EXPECT_EQ(check(duration, "-1"), "-1 seconds is out of range; use 0 or more (0: no limit)");
  EXPECT_NE(check(duration, "inf"), "");
  EXPECT_NE(check(duration, "nan"), "");
  EXPECT_NE(check(duration, "1e999"), "");
  EXPECT_NE(check(duration, "5s"), "");
  const auto interval = seconds_validator(false);
  EXPECT_EQ(check(interval, "0.1"), "");
  EXPECT_EQ(check(interval, "0"), "0 seconds is out of range; use more than 0");
}

// CLI11's own range check printed the largest double in full (300 digits); --duration
// uses this one instead.
TEST(SecondsValidator, NamesTheDurationRangeInOneShortLine) {
  CLI::App app{"test", "eacgm"};
  double duration = 0;
  auto* sub = app.add_subcommand("trace");
  sub->add_option("--duration", duration)
      ->check(seconds_validator(true,
                                " (0: no limit, until the command or the --pid processes exit, or Ctrl-C)"));
  try {
    app.parse(std::vector<std::string>{"abc", "--duration", "trace"});  // reversed argv
    FAIL() << "parsed";
  } catch (const CLI::ParseError& e) {
    const std::string line = usage_error_line(app, e);
    EXPECT_LT(line.size(), 200u) << line;
    EXPECT_EQ(
        line,
        "eacgm trace: --duration: \"abc\" is not a number of seconds; use 0 or more (0: no limit, until the "
        "command or the --pid processes exit, or Ctrl-C) (see eacgm trace --help)");
    EXPECT_EQ(exit_for_parse_error(app, e), 2);
  }
}

TEST(UsageErrorLine, OneLineNamingTheSubcommand) {
  CLI::App app{"test", "eacgm"};
  std::string format;
  auto* sub = app.add_subcommand("trace");
  sub->add_option("--format", format)->check(CLI::IsMember({"jsonl", "text"}));
  try {
    app.parse(std::vector<std::string>{"xml", "--format", "trace"});
    FAIL() << "parsed";
  } catch (const CLI::ParseError& e) {
    const std::string line = usage_error_line(app, e);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_EQ(line.rfind("eacgm trace: --format: ", 0), 0u) << line;
    EXPECT_NE(line.find("(see eacgm trace --help)"), std::string::npos) << line;
    EXPECT_EQ(exit_for_parse_error(app, e), 2);
  }
}

}  // namespace
}  // namespace eacgm::cli
