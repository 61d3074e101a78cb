// Integration tests (root, real eBPF): Python started through a script that execs the
// interpreter (pyenv's python3 shim, a wrapper of the test's own). The script is no
// attach failure; the interpreter it runs is found and its calls are counted exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "events.h"
#include "probe/usdt_notes.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// fib(10) makes 177 calls, each exactly once per run; `leaf` is called 4 times.
constexpr const char* kScript = R"(def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def leaf(i):
    return i * 2

fib(10)
list(map(leaf, range(4)))
)";

class PythonLaunchers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    dir_ = temp_dir();
    script_ = dir_ + "/launched.py";
    std::ofstream(script_) << kScript;
  }

  // Calls of our script by function name, from `eacgm trace --probes python -- argv...`.
  std::map<std::string, int> trace(const std::vector<std::string>& command) {
    std::vector<std::string> argv = {bin("eacgm"),           "trace", "--probes", "python", "-o",
                                     dir_ + "/events.jsonl", "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    Subprocess p(argv, dir_);
    EXPECT_EQ(p.wait(), 0) << p.err();
    err_ = p.err();
    std::map<std::string, int> calls;
    for (const auto& e : read_jsonl(dir_ + "/events.jsonl")) {
      if (e["args"]["file"] == script_) calls[e["name"].get<std::string>()]++;
    }
    return calls;
  }

  void expect_no_attach_failure() const {
    EXPECT_EQ(err_.find("attach failed"), std::string::npos) << err_;
    EXPECT_EQ(err_.find("not an ELF file"), std::string::npos) << err_;
    EXPECT_NE(err_.find("attach_failures=0"), std::string::npos) << err_;
  }

  std::string dir_, script_, err_;
};

// A wrapper named python3 (it matches the python catalog's *python3*, as pyenv's shim
// does) that execs Debian's interpreter, which carries USDT probes: every call is seen.
TEST_F(PythonLaunchers, WrapperScriptIsSkippedAndItsInterpreterTraced) {
  const std::string python = "/usr/bin/python3.11";
  auto notes = probe::read_usdt_probes(python);
  if (!notes || !probe::has_usdt_probe(*notes, "python:function__return")) {
    GTEST_SKIP() << python << " missing or built without USDT probes";
  }
  const std::string wrapper = dir_ + "/python3";
  std::ofstream(wrapper) << "#!/bin/sh\nexec " << python << " \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  auto calls = trace({wrapper, script_});
  expect_no_attach_failure();
  EXPECT_EQ(calls["fib"], 177);
  EXPECT_EQ(calls["leaf"], 4);
}

// pyenv's shim (a bash script running `pyenv exec`), pointed at CPython 3.10 (frame
// reading: every call) through PYENV_VERSION, which eacgm and the command inherit.
TEST_F(PythonLaunchers, PyenvShimIsSkippedAndItsInterpreterTraced) {
  const std::string shim = "/root/.pyenv/shims/python3";
  if (!std::filesystem::exists(shim) ||
      !std::filesystem::exists("/root/.pyenv/versions/3.10.13/bin/python3.10")) {
    GTEST_SKIP() << "pyenv with CPython 3.10.13 is not installed";
  }
  ::setenv("PYENV_VERSION", "3.10.13", 1);
  auto calls = trace({shim, script_});
  expect_no_attach_failure();
  EXPECT_EQ(calls["fib"], 177);
  EXPECT_EQ(calls["leaf"], 4);
  EXPECT_EQ(calls["<module>"], 1);

  // `eacgm run` says nothing about the shim either.
  Subprocess run({bin("eacgm"), "run", "--no-gpu", "--probes", "python", "--", shim, script_}, dir_);
  EXPECT_EQ(run.wait(), 0) << run.err();
  ::unsetenv("PYENV_VERSION");
  EXPECT_EQ(run.err().find("attach failed"), std::string::npos) << run.err();
  EXPECT_NE(run.err().find("attach_failures=0"), std::string::npos) << run.err();
}

}  // namespace
}  // namespace eacgm::test
