// Integration tests (root, real eBPF): sampled Python stacks end in the traced call the
// thread is inside. A script calls the tests' FAKE libcuda through ctypes: each launch
// queues 2 ms of pretend GPU work and cuStreamSynchronize spins on the CPU until it is
// done, as the real driver does; between them a pure-Python loop runs. The folded stacks
// must show wait_gpu ending in the driver's cuStreamSynchronize, in both modes (always-on:
// the counted probe's session return clears the mark; per call: the paired return), and
// the pure-Python loop never.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// Line numbers matter: wait_gpu is on line 10, compute on line 13.
constexpr const char* kScript = R"(import ctypes, sys

cuda = ctypes.CDLL(sys.argv[1])
cuda.cuInit(0)
kernel = ctypes.c_void_p(1)

def launch():
    cuda.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, None, None, None)

def wait_gpu():
    return cuda.cuStreamSynchronize(None)

def compute(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

for _ in range(400):
    launch()
    wait_gpu()
    compute(3000)
)";

class PythonNativeFrames : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes and perf_event programs)";
    if (!std::filesystem::exists(kPython)) GTEST_SKIP() << kPython << " is not installed";
    dir_ = temp_dir();
    script_ = dir_ + "/waits.py";
    std::ofstream(script_) << kScript;
    setenv("EACGM_FAKE_KERNEL_US", "2000", 1);
    setenv("EACGM_FAKE_SYNC_SPIN", "1", 1);
  }
  void TearDown() override {
    unsetenv("EACGM_FAKE_KERNEL_US");
    unsetenv("EACGM_FAKE_SYNC_SPIN");
  }
  static constexpr const char* kPython = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  std::string dir_, script_;
};

TEST_P(PythonNativeFrames, StacksEndInTheTracedCallTheThreadWaitsIn) {
  const std::string folded = dir_ + "/stacks.folded";
  Subprocess p(
      {bin("eacgm"), "run", "--json", "--no-gpu", "--mode", GetParam(), "--probes", "cuda_driver",
       "--python-hz", "499", "--folded", folded, "--", kPython, script_, bin("fake_libcuda/libcuda.so.1")},
      dir_);
  ASSERT_EQ(p.wait(), 0) << p.err();
  const std::string text = read_file(folded);
  // The Python line that waits, then the call it waits in, as the leaf.
  const std::regex waits("python3\\.12 \\([0-9]+\\);<module> \\(" + script_ + ":1\\);wait_gpu \\(" + script_ +
                         ":10\\);\\[cuda_driver\\] cuStreamSynchronize ([0-9]+)\\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, waits)) << text << p.err();
  EXPECT_GT(std::stoi(m[1]), 100) << text;  // 0.8 s of spinning at 499 Hz: about 400
  // The pure-Python loop runs outside every traced call.
  EXPECT_EQ(text.find("compute (" + script_ + ":13);["), std::string::npos) << text;
  EXPECT_NE(text.find("compute (" + script_ + ":13) "), std::string::npos) << text;

  const json doc = json::parse(p.out());
  const json* proc = nullptr;
  for (const auto& pr : doc["python_hot_spots"]["processes"]) {
    if (pr["comm"] == "python3.12") proc = &pr;
  }
  ASSERT_NE(proc, nullptr) << doc["python_hot_spots"].dump(2);
  bool native_row = false;
  for (const auto& f : (*proc)["functions"]) {
    if (f["function"] == "[cuda_driver] cuStreamSynchronize") native_row = f["native"].get<bool>();
  }
  EXPECT_TRUE(native_row) << proc->dump(2);
  bool line_waits = false;
  for (const auto& l : (*proc)["lines"]) {
    line_waits = line_waits || (l["function"] == "wait_gpu" && l["line"] == 11 &&
                                l["call"] == "[cuda_driver] cuStreamSynchronize");
  }
  EXPECT_TRUE(line_waits) << (*proc)["lines"].dump(2);
  EXPECT_NE(p.err().find("py_in_calls="), std::string::npos) << p.err();
}

INSTANTIATE_TEST_SUITE_P(Modes, PythonNativeFrames, ::testing::Values("always-on", "per-call"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "always-on" ? std::string("AlwaysOn")
                                                            : std::string("PerCall");
                         });

}  // namespace
}  // namespace eacgm::test
