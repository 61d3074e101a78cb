// Integration tests (root, real eBPF, real CPython 3.10 to 3.13 from pyenv): the Python stack
// of a thread stuck in a waiting call. A script calls block_wait() of the tests' user library
// (libeacgm_block, traced by a `[[probe]]` with `waits = true`) through ctypes, three named
// Python functions deep, and blocks there for 20 s; with a second argument a thread of its
// own blocks in it too, from another function. The thread is off the CPU, so the sampler
// never sees it: `eacgm run --json` must list each call with its thread's stack read from
// the process's memory, innermost first (the call, then the Python frames with their lines),
// and the age-rule hang must carry it; `eacgm serve` the same on /api/v1/inflight and
// /api/v1/anomalies. CPython 3.10 keeps no kernel thread id in its thread
// states: there the stack is read only for the main thread of a process with one thread
// state.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;

constexpr const char* kConfig = R"([hangs]
min_age_s = 1
hang_after_s = 2

[[probe]]
name = "block_wait"
library = "libeacgm_block.so*"
symbol = "block_wait"
waits = true
args = [
  { name = "index", reg = 0, kind = "raw", format = "signed" },
  { name = "ms", reg = 1, kind = "raw", format = "signed" },
]
)";

// Line numbers matter: the calls are on lines 6, 9, 12, 15 and 19. With GO set, the script
// waits for that file after loading the library (a daemon attaches to it meanwhile).
constexpr const char* kScript = R"(import ctypes, os, sys, threading, time

lib = ctypes.CDLL(sys.argv[1])
while os.environ.get("GO") and not os.path.exists(os.environ["GO"]): time.sleep(0.05)
def wait_in_library(ms):
    return lib.block_wait(1000000, ms)

def exchange_gradients(ms):
    return wait_in_library(ms)

def train_step():
    return exchange_gradients(20000)

def load_batches():
    return lib.block_wait(2000000, 20000)

if len(sys.argv) > 2:
    threading.Thread(target=load_batches, daemon=True).start()
train_step()
)";

// The listed call whose `index` argument is `index`.
const json* call_of(const json& calls, long index) {
  for (const json& c : calls) {
    if (c.at("name") == "block_wait" && c.at("args").at("index") == index) return &c;
  }
  return nullptr;
}

struct Case {
  std::string release;  // pyenv's
  bool threaded;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.release << (c.threaded ? " two threads" : " one thread");
}

class StuckPythonStacks : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes and perf_event programs)";
    const std::string& r = GetParam().release;
    python_ = "/root/.pyenv/versions/" + r + "/bin/python" + r.substr(0, r.rfind('.'));
    if (!std::filesystem::exists(python_)) GTEST_SKIP() << python_ << " is not installed";
    dir_ = temp_dir();
    script_ = dir_ + "/train.py";
    std::ofstream(script_) << kScript;
    std::ofstream(dir_ + "/eacgm.toml") << kConfig;
  }
  std::string python_, dir_, script_;
};

TEST_P(StuckPythonStacks, RunJsonListsTheStuckThreadsPythonStackInnermostFirst) {
  std::vector<std::string> argv = {bin("eacgm"), "run",   "--json",   "--no-gpu",
                                   "--duration", "4",     "--config", dir_ + "/eacgm.toml",
                                   "--",         python_, script_,    bin("libeacgm_block.so")};
  if (GetParam().threaded) argv.push_back("thread");
  Subprocess eacgm(argv, dir_);
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  const json& inflight = doc.at("in_flight");
  const json* main_call = call_of(inflight.at("calls"), 1000000);
  ASSERT_NE(main_call, nullptr) << inflight.dump(1) << eacgm.err();
  EXPECT_EQ(main_call->at("tid"), main_call->at("pid")) << "the main thread's call";
  const bool three_ten = GetParam().release.starts_with("3.10");

  if (three_ten && GetParam().threaded) {
    // Two thread states and no kernel thread id in them: which is whose cannot be told.
    EXPECT_FALSE(main_call->contains("python_stack")) << main_call->dump(1);
    const json* worker = call_of(inflight.at("calls"), 2000000);
    ASSERT_NE(worker, nullptr) << inflight.dump(1);
    EXPECT_FALSE(worker->contains("python_stack")) << worker->dump(1);
    EXPECT_NE(eacgm.err().find("py_stuck_unknown=2"), std::string::npos) << eacgm.err();
    return;
  }
  ASSERT_TRUE(main_call->contains("python_stack")) << main_call->dump(1) << eacgm.err();
  const json expected = {"[user] block_wait", "wait_in_library (" + script_ + ":6)",
                         "exchange_gradients (" + script_ + ":9)", "train_step (" + script_ + ":12)",
                         "<module> (" + script_ + ":19)"};
  EXPECT_EQ(main_call->at("python_stack"), expected) << main_call->dump(1);

  if (GetParam().threaded) {
    const json* worker = call_of(inflight.at("calls"), 2000000);
    ASSERT_NE(worker, nullptr) << inflight.dump(1);
    EXPECT_NE(worker->at("tid"), worker->at("pid"));
    ASSERT_TRUE(worker->contains("python_stack")) << worker->dump(1);
    const json& stack = worker->at("python_stack");
    ASSERT_GE(stack.size(), 3u) << stack.dump();
    EXPECT_EQ(stack[0], "[user] block_wait");
    EXPECT_EQ(stack[1], "load_batches (" + script_ + ":15)");
    EXPECT_NE(stack[2].get<std::string>().find("run ("), std::string::npos) << "threading.Thread.run";
  }

  // The age rule's hang of the main thread carries its stack.
  bool carried = false;
  for (const json& h : inflight.at("hangs")) {
    if (h.at("rule") != "age" || h.at("tid") != main_call->at("tid")) continue;
    ASSERT_EQ(h.at("python_stacks").size(), 1u) << h.dump(1);
    EXPECT_EQ(h.at("python_stacks")[0].at("python_stack"), expected);
    EXPECT_EQ(h.at("python_stacks")[0].at("tid"), main_call->at("tid"));
    carried = true;
  }
  EXPECT_TRUE(carried) << inflight.at("hangs").dump(1);
}

INSTANTIATE_TEST_SUITE_P(Versions, StuckPythonStacks,
                         ::testing::Values(Case{"3.10.13", false}, Case{"3.10.13", true},
                                           Case{"3.11.7", true}, Case{"3.12.1", true}, Case{"3.13.0", true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = "Python" + info.param.release.substr(0, 4);
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name + (info.param.threaded ? "TwoThreads" : "OneThread");
                         });

// The daemon: /api/v1/inflight lists the stuck main thread's stack once the call is
// min_age_s old (the process found by its exec hint and the rescans, not launched by
// eacgm), and /api/v1/anomalies' age-rule hang carries it.
TEST(StuckPythonStacksServe, InflightListsTheStackWhileTheCallWaits) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes and perf_event programs)";
  const std::string python = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  if (!std::filesystem::exists(python)) GTEST_SKIP() << python << " is not installed";
  const std::string dir = temp_dir();
  std::ofstream(dir + "/train.py") << kScript;
  std::ofstream(dir + "/eacgm.toml") << kConfig;
  const std::uint16_t port = free_port();
  Subprocess serve({bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port), "--config",
                    dir + "/eacgm.toml", "--no-gpu"},
                   dir);
  ASSERT_TRUE(serve.wait_for("tracing all processes", true)) << serve.err();
  setenv("GO", (dir + "/go").c_str(), 1);
  Subprocess program({python, dir + "/train.py", bin("libeacgm_block.so")}, dir);
  unsetenv("GO");
  ASSERT_TRUE(serve.wait_for("probes to " + bin("libeacgm_block.so"), true)) << serve.err();
  std::ofstream(dir + "/go") << "go";
  const json expected = {"[user] block_wait", "wait_in_library (" + dir + "/train.py:6)",
                         "exchange_gradients (" + dir + "/train.py:9)",
                         "train_step (" + dir + "/train.py:12)", "<module> (" + dir + "/train.py:19)"};
  json doc;
  const bool listed = eventually(
      [&] {
        auto reply = server::testing::get(port, "/api/v1/inflight");
        doc = json::parse(reply.body, nullptr, false);
        if (doc.is_discarded() || !doc.contains("calls")) return false;
        const json* c = call_of(doc.at("calls"), 1000000);
        return c != nullptr && c->contains("python_stack");
      },
      std::chrono::seconds(15));
  ASSERT_TRUE(listed) << doc.dump(1) << serve.err();
  const json* c = call_of(doc.at("calls"), 1000000);
  EXPECT_EQ(c->at("pid"), program.pid());
  EXPECT_EQ(c->at("tid"), program.pid());
  EXPECT_EQ(c->at("python_stack"), expected);
  // The age rule (hang_after_s = 2) says a hang with the stack.
  json anomalies;
  const bool hung = eventually(
      [&] {
        anomalies = json::parse(server::testing::get(port, "/api/v1/anomalies").body, nullptr, false);
        if (anomalies.is_discarded()) return false;
        for (const json& h : anomalies.value("hangs", json::array())) {
          if (h.at("pid") == program.pid() && !h.at("python_stacks").empty()) return true;
        }
        return false;
      },
      std::chrono::seconds(10));
  ASSERT_TRUE(hung) << anomalies.dump(1);
  for (const json& h : anomalies.at("hangs")) {
    if (h.at("pid") == program.pid()) {
      EXPECT_EQ(h.at("python_stacks")[0].at("python_stack"), expected);
    }
  }
  program.signal(SIGKILL);
  program.wait();
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0) << serve.err();
}

}  // namespace
}  // namespace eacgm::test
