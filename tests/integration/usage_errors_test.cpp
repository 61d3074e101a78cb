// Bad flags and values exit 2 with one line on stderr (docs/cli.md), run against the
// real build/eacgm; --help and --version still exit 0. No privileges needed: parsing
// fails before anything is traced.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "subprocess.h"

namespace {

using eacgm::test::bin;
using eacgm::test::Subprocess;

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Ran eacgm(std::vector<std::string> args) {
  args.insert(args.begin(), bin("eacgm"));
  Subprocess p(args);
  Ran r;
  r.exit_code = p.wait(std::chrono::seconds(60));
  r.out = p.out();
  r.err = p.err();
  return r;
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& starts_with) {
  const Ran r = eacgm(args);
  std::string shown;
  for (const auto& a : args) shown += " " + a;
  EXPECT_EQ(r.exit_code, 2) << "eacgm" << shown << "\n" << r.err;
  EXPECT_EQ(r.out, "") << shown;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << shown << ": " << r.err;
  EXPECT_EQ(r.err.rfind(starts_with, 0), 0u) << shown << ": " << r.err;
  EXPECT_LT(r.err.size(), 300u) << shown << ": " << r.err;
}

TEST(UsageErrors, BadValuesExit2WithOneLine) {
  expect_usage_error({"trace", "--pid", "abc"}, "eacgm trace: ");
  expect_usage_error({"run", "--pid", "abc"}, "eacgm run: ");
  expect_usage_error(
      {"trace", "--duration", "abc"},
      "eacgm trace: --duration: \"abc\" is not a number of seconds; use 0 or more (0: no limit");
  expect_usage_error({"run", "--duration", "-3"}, "eacgm run: --duration: -3 seconds is out of range");
  expect_usage_error({"trace", "--format", "xml"}, "eacgm trace: --format: ");
  expect_usage_error({"trace", "--mode", "sometimes"}, "eacgm trace: --mode: ");
  expect_usage_error({"gpu", "--interval", "0"}, "eacgm gpu: --interval: 0 seconds is out of range");
  expect_usage_error({"trace", "--no-such-flag"}, "eacgm trace: ");
  expect_usage_error({"no-such-command"}, "eacgm: ");
}

// A mistyped command or option is named as typed (CLI11 listed the leftover words
// reversed), with the one most likely meant.
TEST(UsageErrors, UnknownCommandOrOptionSaysWhatWasMeant) {
  Ran r = eacgm({"toop"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "eacgm: unknown command 'toop' (did you mean 'top'?)\n");
  r = eacgm({"serve", "--port", "9978"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "eacgm serve: unknown option --port (did you mean --listen?)\n");
  r = eacgm({"trace", "--formt", "text", "--", "/bin/true"});
  EXPECT_EQ(r.err, "eacgm trace: unknown option --formt (did you mean --format?)\n");
  expect_usage_error({"frobnicate"}, "eacgm: unknown command 'frobnicate' (commands: trace, run, ");
  expect_usage_error({"history", "--zzzzzz"},
                     "eacgm history: unknown option --zzzzzz (see eacgm history --help)");
}

// `eacgm report`: one selector, one format, a window it can read, a store it can open.
TEST(UsageErrors, ReportSaysWhichFlagsGoTogether) {
  expect_usage_error({"report", "--job", "1", "--pod", "p"}, "eacgm report: --job excludes --pod");
  expect_usage_error({"report", "--namespace", "n", "--pod", "p"},
                     "eacgm report: --pod excludes --namespace");
  expect_usage_error({"report", "--json", "--csv"}, "eacgm report: --json excludes --csv");
  expect_usage_error({"report", "--store", "sqlite:/nonexistent/x.db", "--since", "3 days"},
                     "eacgm: since: ");
  expect_usage_error({"report", "--store", "sqlite:/nonexistent/x.db", "--since", "1h", "--from", "2h"},
                     "eacgm: since and from: give one of them");
  expect_usage_error({"report", "--store", "mysql://x"}, "eacgm: --store: ");
  expect_usage_error({"report", "--zzzzzz"},
                     "eacgm report: unknown option --zzzzzz (see eacgm report --help)");
}

// `eacgm` alone traces nothing: it says how to call it, and exits 2.
TEST(UsageErrors, NoCommandPrintsTheUsage) {
  const Ran r = eacgm({});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("usage: eacgm COMMAND [OPTIONS]", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("\ncommands: trace, run, "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("tracing"), std::string::npos) << r.err;
  const Ran help = eacgm({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
}

// A URL where HOST:PORT belongs is told to drop the scheme (not to bracket an IPv6 address).
TEST(UsageErrors, ListenAddressWrittenAsAUrl) {
  const Ran r = eacgm({"serve", "--listen", "http://127.0.0.1:9978", "--store", "off"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("drop the scheme \"http://\" and write HOST:PORT (\"127.0.0.1:9978\")"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("IPv6"), std::string::npos) << r.err;
}

// The advertised URL is where other machines reach the API: a scheme is needed.
TEST(UsageErrors, AdvertiseUrlWithoutAScheme) {
  expect_usage_error(
      {"serve", "--listen", "127.0.0.1:9978", "--advertise-url", "node-7:9977", "--store", "off"},
      "eacgm: --advertise-url: \"node-7:9977\" is no URL of the agent's API: give http://HOST:PORT\n");
}

// One prefix: "eacgm capture: ...", not "eacgm: eacgm capture: ...".
TEST(UsageErrors, CaptureErrorsHaveOnePrefix) {
  expect_usage_error({"capture", "--server", "http://127.0.0.1:1", "-o", "/dev/null"},
                     "eacgm capture: name one process: --pid P, --comm NAME or --rank R");
}

// A job's capture goes through the fleet's store, never one agent or one process.
TEST(UsageErrors, CaptureJobTakesNoProcessOrServerAndTheStoreOnlyWithAJob) {
  expect_usage_error(
      {"capture", "--job", "81723", "--rank", "0", "-o", "/dev/null"},
      "eacgm capture: --job captures every rank of the job through the agents the store lists: "
      "leave out --rank\n");
  expect_usage_error(
      {"capture", "--job", "81723", "--server", "http://127.0.0.1:1", "-o", "/dev/null"},
      "eacgm capture: --job captures every rank of the job through the agents the store lists: "
      "leave out --server\n");
  expect_usage_error({"capture", "--pid", "1", "--store", "sqlite:/nonexistent.db", "-o", "/dev/null"},
                     "eacgm capture: --store goes with --job (the fleet's store)\n");
  expect_usage_error({"capture", "--job", "81723", "--store", "mysql://db/fleet", "-o", "/dev/null"},
                     "eacgm capture: --store: store URL \"mysql://db/fleet\" is not one eacgm knows");
}

TEST(UsageErrors, HelpAndVersionStillExit0) {
  const Ran help = eacgm({"trace", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--duration"), std::string::npos) << help.out;
  const Ran version = eacgm({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find("eacgm 0.1.0"), std::string::npos) << version.out;
}

}  // namespace
