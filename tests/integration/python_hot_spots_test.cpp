// Integration tests (root, real eBPF): `eacgm run`'s Python hot spots, from the stack
// sampler, on pyenv's CPython 3.8 to 3.13 and Debian's python3. A script spends about
// 70% of its CPU in one pure-Python function and 30% in another, measures the true
// shares itself (time.thread_time) and prints them; the sampled self shares must rank
// the functions the same way and come within 5 points of the truth.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

struct Interpreter {
  std::string exe;
  std::string comm;  // as the kernel names the process
  std::string name;  // the test's name
};

// googletest looks this name up to print a parameter.
// NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const Interpreter& py, std::ostream* os) { *os << py.exe; }

std::vector<Interpreter> interpreters() {
  std::vector<Interpreter> out;
  for (const auto& [release, minor] : {std::pair{"3.8.18", 8},
                                       {"3.9.18", 9},
                                       {"3.10.13", 10},
                                       {"3.11.7", 11},
                                       {"3.12.1", 12},
                                       {"3.13.0", 13}}) {
    const std::string m = std::to_string(minor);
    out.push_back({std::string("/root/.pyenv/versions/") + release + "/bin/python3." + m, "python3." + m,
                   "Pyenv3" + m});
  }
  // Debian's interpreter: the executable itself holds libpython (and USDT notes, unused here).
  std::error_code ec;
  const auto debian = std::filesystem::canonical("/usr/bin/python3", ec);
  out.push_back({ec ? std::string("/usr/bin/python3") : debian.string(),
                 ec ? std::string("python3") : debian.filename().string(), "DebianPython3"});
  return out;
}

// Line numbers matter: `hot` is defined on line 3, `cold` on line 9.
// Chunks of random length keep the loop from running in step with the sampling clock.
constexpr const char* kScript = R"(import random, time

def hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def cold(n):
    s = 0
    for i in range(n):
        s += i ^ 3
    return s

def main():
    hot_t = cold_t = 0.0
    start = time.thread_time()
    until = start + 2.0
    while time.thread_time() < until:
        n = random.randint(1000, 13000)
        t0 = time.thread_time()
        hot(n)
        t1 = time.thread_time()
        cold(n * 3 // 7)
        t2 = time.thread_time()
        hot_t += t1 - t0
        cold_t += t2 - t1
    total = time.thread_time() - start
    print("true shares: hot %.4f cold %.4f" % (hot_t / total, cold_t / total), flush=True)

main()
)";

class PythonHotSpots : public ::testing::TestWithParam<Interpreter> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF perf_event programs)";
    if (!std::filesystem::exists(GetParam().exe)) GTEST_SKIP() << GetParam().exe << " is not installed";
    dir_ = temp_dir();
    script_ = dir_ + "/hot_cold.py";
    std::ofstream(script_) << kScript;
  }

  // The shares the script measured, from its output.
  std::pair<double, double> true_shares(const std::string& text) {
    std::smatch m;
    const std::regex re("true shares: hot ([0-9.]+) cold ([0-9.]+)");
    EXPECT_TRUE(std::regex_search(text, m, re)) << text;
    if (m.size() < 3) return {0, 0};
    return {std::stod(m[1]), std::stod(m[2])};
  }

  std::string dir_, script_;
};

TEST_P(PythonHotSpots, HotFunctionRanksFirstWithItsTrueShare) {
  const Interpreter& py = GetParam();
  // 499 Hz for about 1000 samples in 2 s: the sampling error of a 70% share is then
  // about 1.5 points, well inside the 5 asked for.
  Subprocess p({bin("eacgm"), "run", "--json", "--no-gpu", "--python-hz", "499", "--", py.exe, script_},
               dir_);
  ASSERT_EQ(p.wait(), 0) << p.err();
  const auto [hot_true, cold_true] = true_shares(p.err());
  ASSERT_GT(hot_true, 0.5);
  json doc = json::parse(p.out());
  const json& hot = doc["python_hot_spots"];
  EXPECT_EQ(hot["sample_hz"], 499);
  EXPECT_EQ(hot["note"], "sampled at 499 Hz per CPU; shares of on-CPU samples, not exact calls or times");
  const json* proc = nullptr;
  for (const auto& pr : hot["processes"]) {
    if (pr["comm"] == py.comm) proc = &pr;
  }
  ASSERT_NE(proc, nullptr) << hot.dump(2) << p.err();
  EXPECT_GT((*proc)["python_samples"].get<int>(), 600) << proc->dump(2);
  const json& f = (*proc)["functions"];
  ASSERT_GE(f.size(), 3u) << proc->dump(2);
  EXPECT_EQ(f[0]["function"], "hot");
  EXPECT_EQ(f[0]["file"], script_);
  EXPECT_EQ(f[0]["line"], 3);
  EXPECT_EQ(f[1]["function"], "cold");
  EXPECT_EQ(f[1]["line"], 9);
  // main is on every stack of the script's loop: its inclusive samples are the loop's.
  // The script's true shares are of the loop's time (from main's start), so the sampled
  // shares are taken of main's samples: the interpreter's start-up, whose samples vary
  // with the machine's load, is left out of both.
  const json* main_row = nullptr;
  for (const auto& row : f) {
    if (row["function"] == "main" && row["file"] == script_) main_row = &row;
  }
  ASSERT_NE(main_row, nullptr) << proc->dump(2);
  EXPECT_GT((*main_row)["total_share"].get<double>(), 0.9) << main_row->dump();
  const double loop = (*main_row)["total"].get<double>();
  EXPECT_NEAR(f[0]["self"].get<double>() / loop, hot_true, 0.05) << proc->dump(2);
  EXPECT_NEAR(f[1]["self"].get<double>() / loop, cold_true, 0.05) << proc->dump(2);
  // The hottest lines are inside the two loops (lines 5-6 and 11-12).
  const json& lines = (*proc)["lines"];
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0]["function"], "hot");
  EXPECT_GE(lines[0]["line"].get<int>(), 5);
  EXPECT_LE(lines[0]["line"].get<int>(), 6);
  EXPECT_EQ((*proc)["threads"].size(), 1u);
  EXPECT_NE(p.err().find("py_samples="), std::string::npos) << p.err();
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonHotSpots, ::testing::ValuesIn(interpreters()),
                         [](const ::testing::TestParamInfo<Interpreter>& info) { return info.param.name; });

// The text section and the folded stacks, at the default rate (CPython 3.12).
TEST(PythonHotSpotsText, SectionAndFoldedStacks) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF perf_event programs)";
  const std::string exe = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  if (!std::filesystem::exists(exe)) GTEST_SKIP() << exe << " is not installed";
  const std::string dir = temp_dir();
  const std::string script = dir + "/hot_cold.py";
  std::ofstream(script) << kScript;
  const std::string folded = dir + "/stacks.folded";
  Subprocess p({bin("eacgm"), "run", "--no-gpu", "--folded", folded, "--", exe, script}, dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  const std::string out = p.out();
  EXPECT_NE(
      out.find("Python hot spots (sampled; sampled at 99 Hz per CPU; shares of on-CPU samples, not exact "
               "calls or times)"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("python3.12 (pid "), std::string::npos) << out;
  EXPECT_TRUE(
      std::regex_search(out, std::regex("\\n +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+ +hot +" + script + ":3\\n")))
      << out;
  // One line per distinct stack: the process, then the frames from the outermost.
  const std::string text = read_file(folded);
  const std::regex line("python3\\.12 \\([0-9]+\\);<module> \\(" + script + ":1\\);main \\(" + script +
                        ":15\\);hot \\(" + script + ":3\\) ([0-9]+)\\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, line)) << text;
  EXPECT_GT(std::stoi(m[1]), 50);
}

// --python-hz 0 turns the sampler off: no section, no sampler counters.
TEST(PythonHotSpotsText, OffWithZeroRate) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF perf_event programs)";
  const std::string exe = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  if (!std::filesystem::exists(exe)) GTEST_SKIP() << exe << " is not installed";
  const std::string dir = temp_dir();
  Subprocess p({bin("eacgm"), "run", "--no-gpu", "--python-hz", "0", "--", exe, "-c", "sum(range(10**6))"},
               dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  EXPECT_EQ(p.out().find("Python hot spots"), std::string::npos) << p.out();
  EXPECT_EQ(p.err().find("py_samples"), std::string::npos) << p.err();
}

// `eacgm trace --folded FILE`: the calls stream as ever, and the sampled stacks go to
// FILE at the end; --python-hz without --folded, or sampling off with it, are usage errors.
TEST(PythonHotSpotsText, TraceWritesFoldedStacksAtTheEnd) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF perf_event programs)";
  const std::string exe = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  if (!std::filesystem::exists(exe)) GTEST_SKIP() << exe << " is not installed";
  const std::string dir = temp_dir();
  const std::string script = dir + "/hot_cold.py";
  std::ofstream(script) << kScript;
  const std::string folded = dir + "/stacks.folded";
  Subprocess p({bin("eacgm"), "trace", "--no-gpu", "-o", dir + "/events.jsonl", "--python-hz", "499",
                "--folded", folded, "--", exe, script},
               dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  const std::string text = read_file(folded);
  const std::regex line("python3\\.12 \\([0-9]+\\);<module> \\(" + script + ":1\\);main \\(" + script +
                        ":15\\);hot \\(" + script + ":3\\) ([0-9]+)\\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, line)) << text;
  EXPECT_GT(std::stoi(m[1]), 200);

  Subprocess alone({bin("eacgm"), "trace", "--python-hz", "99", "--", exe, "-c", "pass"}, dir);
  EXPECT_EQ(alone.wait(), 2);
  EXPECT_NE(alone.err().find("--python-hz: only with --folded FILE"), std::string::npos) << alone.err();
  Subprocess off({bin("eacgm"), "trace", "--python-hz", "0", "--folded", folded, "--", exe, "-c", "pass"},
                 dir);
  EXPECT_EQ(off.wait(), 2);
  EXPECT_NE(off.err().find("--folded: Python sampling is off"), std::string::npos) << off.err();
}

}  // namespace
}  // namespace eacgm::test
