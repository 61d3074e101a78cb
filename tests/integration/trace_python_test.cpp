// Integration tests (root, real eBPF): Python functions through CPython's USDT probes
// (/usr/bin/python3.11 with its semaphores raised by the kernel), and PyTorch op bindings
// through a stand-in libtorch_python.so whose bindings are local symbols.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "events.h"
#include "probe/usdt_notes.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

constexpr const char* kPython = "/usr/bin/python3.11";

bool python_has_usdt() {
  auto notes = probe::read_usdt_probes(kPython);
  return notes.ok() && probe::has_usdt_probe(*notes, "python:function__return");
}

// Known calls: fib(6) recursion 5 times, an exception raised and caught 3 times (the
// raising frame still returns), a generator resumed 3 times, a method, a nested closure.
constexpr const char* kScript = R"(import time

def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

def boom(k):
    raise ValueError(k)

def catcher():
    caught = 0
    for i in range(3):
        try:
            boom(i)
        except ValueError:
            caught += 1
    return caught

def gen():
    yield 1
    yield 2

class Box:
    def area(self, w, h):
        return w * h

def outer():
    def inner():
        time.sleep(0.002)
        return 1
    return inner() + inner()

for _ in range(5):
    fib(6)
catcher()
list(gen())
b = Box()
for i in range(7):
    b.area(i, 2)
outer()
)";

class TracePython : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    if (!python_has_usdt()) GTEST_SKIP() << kPython << " missing or built without USDT probes";
    dir_ = temp_dir();
    script_ = dir_ + "/known_calls.py";
    std::ofstream(script_) << kScript;
  }

  // The events of our script, by function name.
  std::map<std::string, std::vector<json>> trace(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {bin("eacgm"), "trace", "--probes",
                                     "python",     "-o",    dir_ + "/events.jsonl"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char* a : {"--", kPython, script_.c_str()}) argv.push_back(a);
    Subprocess p(argv, dir_);
    EXPECT_EQ(p.wait(), 0) << p.err();
    err_ = p.err();
    std::map<std::string, std::vector<json>> by_name;
    all_ = read_jsonl(dir_ + "/events.jsonl");
    for (const auto& e : all_) {
      EXPECT_EQ(e["domain"], "python");
      EXPECT_EQ(e["comm"], "python3.11");
      if (e["args"]["file"] == script_) by_name[e["name"].get<std::string>()].push_back(e);
    }
    return by_name;
  }

  std::string dir_, script_, err_;
  std::vector<json> all_;
};

std::multiset<int> lines_of(const std::vector<json>& events) {
  std::multiset<int> out;
  for (const auto& e : events) out.insert(e["args"]["line"].get<int>());
  return out;
}

TEST_F(TracePython, ExactCallsFilesAndLines) {
  auto calls = trace();
  // fib(6) makes 25 calls; its frames return from line 5 (n < 2) or line 6.
  ASSERT_EQ(calls["fib"].size(), 125u);
  auto fib_lines = lines_of(calls["fib"]);
  EXPECT_EQ(fib_lines.count(5), 65u);  // 13 leaves per fib(6)
  EXPECT_EQ(fib_lines.count(6), 60u);
  // Each raise unwinds boom's frame through function__return at the raise line.
  EXPECT_EQ(lines_of(calls["boom"]), (std::multiset<int>{9, 9, 9}));
  EXPECT_EQ(lines_of(calls["catcher"]), (std::multiset<int>{18}));
  // A generator frame returns at each yield and at its end.
  EXPECT_EQ(lines_of(calls["gen"]), (std::multiset<int>{21, 22, 22}));
  EXPECT_EQ(calls["area"].size(), 7u);
  EXPECT_EQ(lines_of(calls["area"]), (std::multiset<int>{26, 26, 26, 26, 26, 26, 26}));
  EXPECT_EQ(lines_of(calls["inner"]), (std::multiset<int>{31, 31}));
  EXPECT_EQ(lines_of(calls["outer"]), (std::multiset<int>{32}));
  // A class body runs as a frame of its own, named after the class.
  EXPECT_EQ(lines_of(calls["Box"]), (std::multiset<int>{25}));
  EXPECT_EQ(calls["<module>"].size(), 1u);
  // Nothing else of ours: the names are exact.
  EXPECT_EQ(calls.size(), 9u);
  // Every call paired with its entry (generator resumptions and raising frames too),
  // with a plausible duration.
  for (const auto& [name, events] : calls) {
    for (const auto& e : events) {
      ASSERT_TRUE(e["dur_ns"].is_number()) << e.dump();
      EXPECT_LT(e["dur_ns"].get<std::uint64_t>(), 5'000'000'000u) << e.dump();
      if (name == "inner") {
        EXPECT_GE(e["dur_ns"].get<std::uint64_t>(), 2'000'000u) << e.dump();
      }
    }
  }
  // The interpreter's own modules are traced too (no filter).
  std::size_t others = 0;
  for (const auto& e : all_) others += e["args"]["file"] != script_;
  EXPECT_GT(others, 0u);
}

TEST_F(TracePython, FileFilterKeepsOnlyMatchingFiles) {
  std::ofstream(dir_ + "/eacgm.toml") << "[python]\nfile_filter = \"*/known_calls.py\"\n";
  auto calls = trace({"--config", dir_ + "/eacgm.toml"});
  EXPECT_EQ(calls["fib"].size(), 125u);
  EXPECT_EQ(calls["area"].size(), 7u);
  for (const auto& e : all_) EXPECT_EQ(e["args"]["file"], script_) << e.dump();
}

// fib(15): 1973 calls, nested 15 deep. CPython 3.11 fires function__entry only while its
// line probe's semaphore is raised, which eacgm keeps raised (src/probe/python_usdt.h):
// without it, 1968 of these calls came without their entry, hence without a duration.
constexpr const char* kFibScript = R"(def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

fib(15)
)";

// A counter of the final "done" line.
std::uint64_t done_counter(const std::string& err, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(" " + name + "=([0-9]+)"))) return ~0ULL;
  return std::stoull(m[1]);
}

TEST_F(TracePython, RecursiveCallsHaveDurationsAndExactCounts) {
  std::ofstream(script_) << kFibScript;
  auto calls = trace();
  const auto& fib = calls["fib"];
  ASSERT_EQ(fib.size(), 1973u);
  EXPECT_EQ(calls.size(), 2u);  // fib and <module>
  std::size_t timed = 0;
  const json* root = nullptr;
  for (const auto& e : fib) {
    if (!e["dur_ns"].is_number()) continue;
    ++timed;
    if (root == nullptr || e["dur_ns"].get<std::uint64_t>() > (*root)["dur_ns"].get<std::uint64_t>())
      root = &e;
  }
  EXPECT_GE(timed * 100, fib.size() * 95) << err_;
  // Paired with the right entries: fib(15)'s call spans every other one, and its return
  // (line 4) comes last.
  ASSERT_NE(root, nullptr);
  EXPECT_EQ((*root)["args"]["line"], 4);
  const std::uint64_t start = (*root)["ts_ns"].get<std::uint64_t>();
  const std::uint64_t end = start + (*root)["dur_ns"].get<std::uint64_t>();
  for (const auto& e : fib) {
    if (!e["dur_ns"].is_number()) continue;
    EXPECT_GE(e["ts_ns"].get<std::uint64_t>(), start) << e.dump();
    EXPECT_LE(e["ts_ns"].get<std::uint64_t>() + e["dur_ns"].get<std::uint64_t>(), end) << e.dump();
  }
  const std::uint64_t total = done_counter(err_, "python_calls");
  const std::uint64_t unpaired = done_counter(err_, "python_unpaired");
  ASSERT_NE(total, ~0ULL) << err_;
  EXPECT_LE(unpaired * 100, total * 5) << err_;
}

// [python] usdt_durations = false leaves the interpreter's dispatch alone: the same
// exact counts, without durations.
TEST_F(TracePython, WithoutUsdtDurationsCallsAreCountedOnly) {
  std::ofstream(script_) << kFibScript;
  std::ofstream(dir_ + "/eacgm.toml") << "[python]\nusdt_durations = false\n";
  auto calls = trace({"--config", dir_ + "/eacgm.toml"});
  const auto& fib = calls["fib"];
  ASSERT_EQ(fib.size(), 1973u);
  std::size_t timed = 0;
  for (const auto& e : fib) timed += e["dur_ns"].is_number();
  EXPECT_LE(timed, 5u) << err_;
}

TEST(TraceTorch, OpBindingsByNameWithExactCounts) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  std::string dir = temp_dir();
  Subprocess p(
      {bin("eacgm"), "trace", "--probes", "torch", "-o", dir + "/events.jsonl", "--", bin("torch_ops"), "3"},
      dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  // The program prints "op expected_count" for each binding it called.
  std::map<std::string, int> expected;
  std::regex line_re(R"((\w+) (\d+))");
  std::string out = p.out();
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line_re); it != std::sregex_iterator(); ++it) {
    expected[(*it)[1]] = std::stoi((*it)[2]);
  }
  ASSERT_EQ(expected.size(), 40u) << out;
  std::map<std::string, int> seen;
  for (const auto& e : read_jsonl(dir + "/events.jsonl")) {
    EXPECT_EQ(e["domain"], "torch");
    EXPECT_EQ(e["comm"], "torch_ops");
    ASSERT_TRUE(e["dur_ns"].is_number()) << e.dump();
    EXPECT_NE(e["ret"], "0x0");  // the bindings return a non-null object
    seen[e["name"].get<std::string>()]++;
  }
  // Exact op names (no demangled signatures), exact counts, and no property getter.
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(seen.count("get_grad"), 0u);
}

}  // namespace
}  // namespace eacgm::test
