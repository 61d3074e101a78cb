// Integration tests (root, real eBPF): Python functions through frame reading at
// _PyEval_EvalFrameDefault, in pyenv's CPython 3.8 to 3.13 (built without USDT probes,
// interpreters in a shared libpython3.X.so.1.0). The counts follow each version's
// semantics: up to 3.10 every Python call enters _PyEval_EvalFrameDefault; 3.11+ only
// when a call comes from C (docs/probes.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "events.h"
#include "probe/usdt_notes.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

struct Interpreter {
  const char* release;  // pyenv's version directory
  int minor;
  std::string exe() const {
    return std::string("/root/.pyenv/versions/") + release + "/bin/python3." + std::to_string(minor);
  }
  std::string lib() const {
    return std::string("/root/.pyenv/versions/") + release + "/lib/libpython3." + std::to_string(minor) +
           ".so.1.0";
  }
  std::string comm() const { return "python3." + std::to_string(minor); }
};

void PrintTo(const Interpreter& py, std::ostream* os) { *os << py.exe(); }

const Interpreter kInterpreters[] = {{"3.8.18", 8},  {"3.9.18", 9},  {"3.10.13", 10},
                                     {"3.11.7", 11}, {"3.12.1", 12}, {"3.13.0", 13}};

bool has_python_usdt(const std::string& path) {
  auto notes = probe::read_usdt_probes(path);
  if (!notes.ok()) return false;
  for (const auto& n : *notes) {
    if (n.provider == "python") return true;
  }
  return false;
}

// Line numbers matter: every function's first line (co_firstlineno) is asserted.
constexpr const char* kScript = R"(import time

def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

def down(n):
    return 0 if n == 0 else down(n - 1) + 1

def square(x):
    return x * x

def neg(x):
    return -x

def boom(k):
    raise ValueError(k)

def gen():
    yield 1
    yield 2

class Outer:
    def method(self, x):
        return x + 1

    class Inner:
        def __call__(self, x):
            time.sleep(0.002)
            return x

def main():
    for _ in range(5):
        fib(6)
    down(30)
    list(map(square, range(4)))
    sorted([3, 1, 2], key=neg)
    o = Outer()
    list(map(o.method, range(3)))
    inner = Outer.Inner()
    for i in range(6):
        inner(i)
    list(gen())
    for i in range(3):
        try:
            list(map(boom, [i]))
        except ValueError:
            pass

main()
)";

// name -> (first line, calls) expected from the script above.
using Expected = std::map<std::string, std::pair<int, std::size_t>>;

Expected expected_calls(int minor) {
  if (minor <= 10) {
    // Every call, named by co_name.
    return {{"<module>", {1, 1}}, {"fib", {3, 125}},  {"down", {8, 31}},     {"square", {11, 4}},
            {"neg", {14, 3}},     {"boom", {17, 3}},  {"gen", {20, 3}},      {"Outer", {24, 1}},
            {"method", {25, 3}},  {"Inner", {28, 1}}, {"__call__", {29, 6}}, {"main", {33, 1}}};
  }
  // Only frames entered from C, named by co_qualname: the module body (run by the
  // interpreter), class bodies (builtins.__build_class__), functions that map(), sorted()
  // and list() (a generator, resumed three times) call, and an instance's __call__
  // (slot_tp_call). fib, down and main are called from Python: inlined, not seen.
  return {{"<module>", {1, 1}},      {"square", {11, 4}},      {"neg", {14, 3}},
          {"boom", {17, 3}},         {"gen", {20, 3}},         {"Outer", {24, 1}},
          {"Outer.method", {25, 3}}, {"Outer.Inner", {28, 1}}, {"Outer.Inner.__call__", {29, 6}}};
}

class TracePythonFrames : public ::testing::TestWithParam<Interpreter> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    const Interpreter& py = GetParam();
    if (!std::filesystem::exists(py.exe())) GTEST_SKIP() << py.exe() << " is not installed";
    // These interpreters are the no-USDT case; with notes the USDT path would be taken.
    ASSERT_FALSE(has_python_usdt(py.lib())) << py.lib();
    dir_ = temp_dir();
    script_ = dir_ + "/frame_calls.py";
    std::ofstream(script_) << kScript;
  }

  // The events of our script, by function name.
  std::map<std::string, std::vector<json>> trace(const std::vector<std::string>& extra = {}) {
    const Interpreter& py = GetParam();
    std::vector<std::string> argv = {bin("eacgm"), "trace", "--probes",
                                     "python",     "-o",    dir_ + "/events.jsonl"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", py.exe(), script_});
    Subprocess p(argv, dir_);
    EXPECT_EQ(p.wait(), 0) << p.err();
    err_ = p.err();
    std::map<std::string, std::vector<json>> by_name;
    all_ = read_jsonl(dir_ + "/events.jsonl");
    for (const auto& e : all_) {
      EXPECT_EQ(e["domain"], "python");
      EXPECT_EQ(e["comm"], py.comm());
      if (e["args"]["file"] == script_) by_name[e["name"].get<std::string>()].push_back(e);
    }
    return by_name;
  }

  std::string dir_, script_, err_;
  std::vector<json> all_;
};

std::uint64_t end_of(const json& e) {
  return e["ts_ns"].get<std::uint64_t>() + e["dur_ns"].get<std::uint64_t>();
}

TEST_P(TracePythonFrames, ExactNamesLinesAndCountsForTheVersion) {
  const Interpreter& py = GetParam();
  auto calls = trace();
  EXPECT_NE(err_.find("attached 1 probes to " + py.lib()), std::string::npos) << err_;
  Expected want = expected_calls(py.minor);
  std::map<std::string, std::pair<int, std::size_t>> got;
  for (const auto& [name, events] : calls) {
    std::set<int> lines;
    for (const auto& e : events) lines.insert(e["args"]["line"].get<int>());
    EXPECT_EQ(lines.size(), 1u) << name;
    got[name] = {*lines.begin(), events.size()};
  }
  EXPECT_EQ(got, want);

  // Every call has its entry and its return: a duration, and a plausible one.
  for (const auto& e : all_) {
    ASSERT_TRUE(e["dur_ns"].is_number()) << e.dump();
    EXPECT_LT(e["dur_ns"].get<std::uint64_t>(), 5'000'000'000u) << e.dump();
    EXPECT_TRUE(e["args"]["line"].is_number()) << e.dump();
  }
  const std::string call = py.minor <= 10 ? "__call__" : "Outer.Inner.__call__";
  for (const auto& e : calls[call]) EXPECT_GE(e["dur_ns"].get<std::uint64_t>(), 2'000'000u) << e.dump();
  // Paired with the right entry: the module's frame spans every other call of ours,
  // and on 3.10 main's frame spans each fib call (nested returns come first).
  ASSERT_EQ(calls["<module>"].size(), 1u);
  const json& module = calls["<module>"][0];
  for (const auto& [name, events] : calls) {
    for (const auto& e : events) {
      EXPECT_GE(e["ts_ns"].get<std::uint64_t>(), module["ts_ns"].get<std::uint64_t>()) << e.dump();
      EXPECT_LE(end_of(e), end_of(module)) << e.dump();
    }
  }
  if (py.minor <= 10) {
    const json& main = calls["main"][0];
    EXPECT_GE(main["dur_ns"].get<std::uint64_t>(), 12'000'000u);  // six 2 ms sleeps inside
    for (const auto& e : calls["fib"]) {
      EXPECT_GE(e["ts_ns"].get<std::uint64_t>(), main["ts_ns"].get<std::uint64_t>());
      EXPECT_LE(end_of(e), end_of(main));
    }
  }
  // Nothing lost or left unpaired (down(30) nests well within the kernel's limits).
  EXPECT_NE(err_.find("python_unpaired=0"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("python_unreturned"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("python_orphan_returns"), std::string::npos) << err_;
  EXPECT_NE(err_.find("read_faults=0"), std::string::npos) << err_;
  // The interpreter's own modules are traced too (no filter).
  std::size_t others = 0;
  for (const auto& e : all_) others += e["args"]["file"] != script_;
  EXPECT_GT(others, 0u);
}

TEST_P(TracePythonFrames, FileFilterKeepsOnlyMatchingFiles) {
  std::ofstream(dir_ + "/eacgm.toml") << "[python]\nfile_filter = \"*/frame_calls.py\"\n";
  auto calls = trace({"--config", dir_ + "/eacgm.toml"});
  EXPECT_EQ(calls["<module>"].size(), 1u);
  EXPECT_EQ(calls["square"].size(), 4u);
  for (const auto& e : all_) EXPECT_EQ(e["args"]["file"], script_) << e.dump();
  std::size_t total = 0;
  for (const auto& [name, line_count] : expected_calls(GetParam().minor)) total += line_count.second;
  EXPECT_EQ(all_.size(), total);
  EXPECT_EQ(total, GetParam().minor <= 10 ? 182u : 25u);
}

INSTANTIATE_TEST_SUITE_P(Pyenv, TracePythonFrames, ::testing::ValuesIn(kInterpreters),
                         [](const ::testing::TestParamInfo<Interpreter>& info) {
                           return "Python3" + std::to_string(info.param.minor);
                         });

// A statically linked interpreter (libpython inside the executable, as python.org and
// many distribution builds are): Debian's python3.11 with its USDT notes removed, so
// the executable itself is read through its frames, with 3.11 semantics.
TEST(TracePythonFramesStatic, ExecutableWithoutUsdtNotes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  const std::string debian = "/usr/bin/python3.11";
  if (!std::filesystem::exists(debian) || !std::filesystem::exists("/usr/bin/objcopy")) {
    GTEST_SKIP() << debian << " or objcopy is not installed";
  }
  std::string dir = temp_dir();
  const std::string exe = dir + "/python3.11";
  Subprocess strip({"/usr/bin/objcopy", "--remove-section", ".note.stapsdt", debian, exe}, dir);
  ASSERT_EQ(strip.wait(), 0) << strip.err();
  ASSERT_FALSE(has_python_usdt(exe));
  const std::string script = dir + "/frame_calls.py";
  std::ofstream(script) << kScript;
  Subprocess p({bin("eacgm"), "trace", "--probes", "python", "-o", dir + "/events.jsonl", "--", exe, script},
               dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  EXPECT_NE(p.err().find("attached 1 probes to " + exe), std::string::npos) << p.err();
  // Said on the spot: 3.11 inlines Python-to-Python calls, so the frame probe sees few.
  EXPECT_NE(
      p.err().find("notice: " + exe + ": CPython 3.11 runs Python-to-Python calls inside one eval loop"),
      std::string::npos)
      << p.err();
  std::map<std::string, std::pair<int, std::size_t>> got;
  for (const auto& e : read_jsonl(dir + "/events.jsonl")) {
    ASSERT_TRUE(e["dur_ns"].is_number()) << e.dump();
    if (e["args"]["file"] != script) continue;
    auto& g = got[e["name"].get<std::string>()];
    g.first = e["args"]["line"].get<int>();
    ++g.second;
  }
  EXPECT_EQ(got, expected_calls(11));
}

// `eacgm probes --check` names the mode of each interpreter file it finds: frame reading
// for a running pyenv interpreter, USDT for Debian's libpython3.11 (in the loader cache).
TEST(ProbesCheck, SaysWhichModeEachInterpreterFileResolvesIn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (reads every process's maps)";
  const Interpreter& py = kInterpreters[4];
  if (!std::filesystem::exists(py.exe())) GTEST_SKIP() << py.exe() << " is not installed";
  std::string dir = temp_dir();
  Subprocess sleeper({py.exe(), "-c", "import time; print('up', flush=True); time.sleep(60)"}, dir);
  ASSERT_TRUE(sleeper.wait_for("up"));
  Subprocess check({bin("eacgm"), "probes", "--check"}, dir);
  ASSERT_EQ(check.wait(), 0) << check.err();
  sleeper.signal(SIGKILL);
  const std::string out = check.out();
  EXPECT_NE(out.find("ok " + py.lib() +
                     ": 1 symbol(s) [mode: frame reading, CPython 3.12 layout, version from "
                     "file name], mapped by 1 process(es)"),
            std::string::npos)
      << out;
  // The summary comes first; a file traced by the other Python spec is marked `==`.
  EXPECT_EQ(out.rfind("summary: ", 0), 0u) << out.substr(0, 400);
  EXPECT_NE(out.find("== " + py.lib() + ": no USDT site; traced by frame reading (python_frame) instead"),
            std::string::npos)
      << out;
  const std::string debian = "/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
  if (std::filesystem::exists(debian) && has_python_usdt(debian)) {
    EXPECT_NE(out.find("ok " + debian + ": 1 USDT site(s) [mode: USDT]"), std::string::npos) << out;
    EXPECT_NE(out.find("== " + debian +
                       ": traced by its USDT probes (python:function__entry) instead [mode: USDT]"),
              std::string::npos)
        << out;
  }
}

}  // namespace
}  // namespace eacgm::test
