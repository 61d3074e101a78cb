// Usage errors: readable seconds checks and one-line messages (exit codes are checked
// against build/eacgm in tests/integration/usage_errors_test.cpp).
#include "cli/usage_errors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

// The commands and options of a small eacgm: the leftover words are named in the order
// given, with the closest name.
struct SmallEacgm {
  CLI::App app{"test", "eacgm"};
  std::string listen, format;
  SmallEacgm() {
    app.require_subcommand(0, 1);
    auto* serve = app.add_subcommand("serve");
    serve->add_option("--listen", listen);
    serve->add_option("--token-file", format);
    auto* trace = app.add_subcommand("trace");
    trace->add_option("--format", format);
    app.add_subcommand("top");
  }
  // The line for `args` (in order), "" when they parse.
  std::string line(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes argv reversed
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return usage_error_line(app, e);
    }
    return "";
  }
};

TEST(UsageErrorLine, UnknownCommandSaysWhichWasMeant) {
  EXPECT_EQ(SmallEacgm().line({"toop"}), "eacgm: unknown command 'toop' (did you mean 'top'?)");
  EXPECT_EQ(SmallEacgm().line({"trcae", "--format", "text"}),
            "eacgm: unknown command 'trcae' (did you mean 'trace'?)");
  EXPECT_EQ(SmallEacgm().line({"zzzzzz"}), "eacgm: unknown command 'zzzzzz' (commands: serve, trace, top)");
}

TEST(UsageErrorLine, UnknownOptionInOrderWithWhatWasMeant) {
  EXPECT_EQ(SmallEacgm().line({"serve", "--port", "9978"}),
            "eacgm serve: unknown option --port (did you mean --listen?)");
  EXPECT_EQ(SmallEacgm().line({"serve", "--host=0.0.0.0"}),
            "eacgm serve: unknown option --host (did you mean --listen?)");
  EXPECT_EQ(SmallEacgm().line({"trace", "--fromat", "text"}),
            "eacgm trace: unknown option --fromat (did you mean --format?)");
  EXPECT_EQ(SmallEacgm().line({"trace", "--port", "1"}),
            "eacgm trace: unknown option --port (see eacgm trace --help)")
      << "no --listen to point at";
  EXPECT_EQ(SmallEacgm().line({"serve", "extra"}),
            "eacgm serve: unexpected argument 'extra' (see eacgm serve --help)");
}

TEST(UsageText, NamesEveryCommand) {
  SmallEacgm e;
  EXPECT_EQ(usage_text(e.app),
            "usage: eacgm COMMAND [OPTIONS] (eacgm --help describes the commands, eacgm COMMAND --help their "
            "options)\ncommands: serve, trace, top");
}

}  // namespace
}  // namespace eacgm::cli
