// Bad input: each mistake gets one line on stderr that says what to do, a non-zero
// exit code, and no crash.
#include <gtest/gtest.h>

#include <fstream>

#include "subprocess.h"

namespace eacgm::test {
namespace {

struct Outcome {
  int code;
  std::string err;
};

Outcome run_eacgm(std::vector<std::string> args) {
  args.insert(args.begin(), bin("eacgm"));
  Subprocess p(args);
  int code = p.wait(std::chrono::seconds(60));
  return {code, p.err()};
}

void expect_one_line_error(const Outcome& o, int code, const std::string& phrase) {
  EXPECT_EQ(o.code, code) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line expected:\n" << o.err;
  EXPECT_EQ(o.err.rfind("eacgm: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find(phrase), std::string::npos) << o.err;
}

// A usage error: "eacgm SUBCOMMAND: ... (see eacgm SUBCOMMAND --help)", exit code 2.
void expect_usage_error(const Outcome& o, const std::string& phrase) {
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line expected:\n" << o.err;
  EXPECT_EQ(o.err.rfind("eacgm ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("--help)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(phrase), std::string::npos) << o.err;
}

std::string write_config(const std::string& text) {
  std::string path = temp_dir() + "/eacgm.toml";
  std::ofstream(path) << text;
  return path;
}

TEST(BadInput, UnknownProbeName) {
  expect_one_line_error(run_eacgm({"trace", "--probes", "cuda,nosuchprobe", "--", "/bin/true"}), 2,
                        "unknown probe name 'nosuchprobe' (catalogs: cuda");
}

// A mistyped catalog in the file is named where it is, with the catalog most likely meant.
TEST(BadInput, UnknownCatalogInTheConfigNamesItsPlace) {
  std::string cfg = write_config("# probes\n\ncatalogs = [\"cuda\", \"ncll\"]\n");
  expect_one_line_error(run_eacgm({"trace", "--config", cfg, "--", "/bin/true"}), 2,
                        cfg + ":3:21: unknown catalog \"ncll\" (did you mean \"nccl\"?)");
}

TEST(BadInput, SpecForSymbolThatDoesNotExist) {
  std::string cfg =
      write_config("[[probe]]\nname = \"typo\"\nlibrary = \"libcudart.so*\"\nsymbol = \"cudaMallocc\"\n");
  expect_one_line_error(run_eacgm({"trace", "--config", cfg, "--", bin("cuda_calls")}), 2,
                        "probe \"typo\": symbol \"cudaMallocc\" not found in");
}

TEST(BadInput, InvalidConfigNamesTheLine) {
  std::string cfg = write_config("[trace]\nringbuf_mib = 3\n");
  auto o = run_eacgm({"trace", "--config", cfg, "--", "/bin/true"});
  expect_one_line_error(o, 2, "eacgm.toml:2:");
}

TEST(BadInput, MissingConfigFile) {
  expect_one_line_error(run_eacgm({"run", "--config", "/nonexistent/eacgm.toml", "--", "/bin/true"}), 2,
                        "cannot read config /nonexistent/eacgm.toml");
}

TEST(BadInput, NoRootPrivileges) {
  // setpriv drops to nobody with no capabilities, as an unprivileged user would run.
  Subprocess p({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                bin("eacgm"), "trace", "--", "/bin/true"});
  Outcome o{p.wait(), p.err()};
  expect_one_line_error(o, 1, "tracing needs root (or the CAP_BPF and CAP_PERFMON capabilities)");
}

TEST(BadInput, KernelWithoutBtf) {
  expect_one_line_error(run_eacgm({"trace", "--btf", "/nonexistent/vmlinux", "--", "/bin/true"}), 1,
                        "cannot read BTF file /nonexistent/vmlinux");
}

TEST(BadInput, NonexistentPid) {
  expect_one_line_error(run_eacgm({"trace", "--pid", "999999999"}), 2, "no such process: 999999999");
}

// A kernel thread has no user code: said, not traced in silence (kthreadd is pid 2 in
// the machine's PID namespace; any kernel thread would do).
TEST(BadInput, KernelThreadPid) {
  std::ifstream stat("/proc/2/stat");
  std::string line;
  std::getline(stat, line);
  if (line.find("(kthreadd)") == std::string::npos) GTEST_SKIP() << "pid 2 is not kthreadd here: " << line;
  expect_one_line_error(run_eacgm({"run", "--pid", "2", "--duration", "1"}), 2, "pid 2 is a kernel thread");
}

// An empty name in a comma-separated list is an error, where it is and whatever it is.
TEST(BadInput, EmptyNameInTheProbeList) {
  for (const char* list : {"cuda,,", ",cuda", "", "cuda,,nccl"}) {
    expect_usage_error(run_eacgm({"run", "--probes", list, "--", "/bin/true"}),
                       "--probes: \"" + std::string(list) + "\" has an empty name");
  }
}

TEST(BadInput, UnknownGovernSubcommandIsNamed) {
  expect_usage_error(run_eacgm({"govern", "foo"}), "unknown subcommand \"foo\" (there is: status)");
}

TEST(BadInput, GpuCountZeroIsOutOfRange) {
  expect_usage_error(run_eacgm({"gpu", "--count", "0"}), "--count: Value 0 not in range 1");
}

TEST(BadInput, NonexistentCommand) {
  expect_one_line_error(run_eacgm({"trace", "--", "/nonexistent/command"}), 127,
                        "command not found: /nonexistent/command");
  expect_one_line_error(run_eacgm({"run", "--", "no-such-command-anywhere"}), 127,
                        "command not found: no-such-command-anywhere (not on PATH)");
}

TEST(BadInput, UnknownOptionAndFormat) {
  auto o = run_eacgm({"trace", "--format", "xml"});
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.err.find("--format"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace eacgm::test

namespace eacgm::test {
namespace {

// A user probe whose library pattern matches nothing is said once at start and counted
// in the accounting line, not left to trace nothing in silence.
TEST(BadInput, ProbeWhoseLibraryMatchesNothingIsWarnedAndCounted) {
  std::string cfg = write_config("[[probe]]\nname = \"x\"\nlibrary = \"libnotthere.so*\"\nsymbol = \"f\"\n");
  Subprocess p({bin("eacgm"), "trace", "--no-gpu", "--config", cfg, "--", "/bin/true"});
  EXPECT_EQ(p.wait(std::chrono::seconds(60)), 0);
  const std::string err = p.err();
  const std::string warning = "warning: probe \"x\": no library matching \"libnotthere.so*\"";
  ASSERT_NE(err.find(warning), std::string::npos) << err;
  EXPECT_EQ(err.find(warning, err.find(warning) + 1), std::string::npos) << "said once:\n" << err;
  EXPECT_NE(err.find("unmatched_probes=1"), std::string::npos) << err;
}

}  // namespace
}  // namespace eacgm::test
