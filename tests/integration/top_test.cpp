// `eacgm top` under tmux against a serve tracing a test program: the pane shows the
// traced process with its numbers, reacts to a sort key and to a filter, `c` captures the
// selected process into the state folder (not the current one), and `q` ends it with
// exit 0. With no agent at the default address it starts its own probes and shows
// the same; with no agent at a --server named by the user it says so in one line and
// exits 2.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using namespace std::chrono_literals;

std::string shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

// The calls per second on the pane's line that starts with `row_start` ("PID COMM"); -1
// when there is no such line. Columns: PID COMM RANK GPU-MEM CALLS/S KERNELS/S ANOMALIES.
double calls_per_second(const std::string& pane, const std::string& row_start) {
  const auto at = pane.find(row_start);
  if (at == std::string::npos) return -1;
  std::istringstream row(pane.substr(at, pane.find('\n', at) - at));
  std::string f[7];
  for (auto& x : f) row >> x;
  return std::strtod(f[4].c_str(), nullptr);
}

// What the tmux command wrote into `file` (top's exit status, `echo $?`); "" before.
std::string exit_code_in(const std::string& file) {
  std::ifstream in(file);
  std::string code;
  in >> code;
  return code;
}

class Top : public ServeFixture {};

TEST_F(Top, ShowsTheTracedProcessSortsFiltersAndQuits) {
  if (shell("command -v tmux").empty()) GTEST_FAIL() << "tmux is missing (scripts/setup.sh installs it)";
  auto serve = start_serve({"--probes", "cuda_driver"}, "always-on");
  const std::string go = dir_ + "/go";
  Subprocess loop({bin("capture_calls"), "--seconds", "30", "--log", dir_ + "/calls.log", "--wait-file", go});
  ASSERT_TRUE(loop.wait_for("ready", false)) << loop.err();
  ASSERT_TRUE(serve->wait_for("libcuda.so", true)) << serve->err();
  std::ofstream(go) << "go";
  const std::string session = "eacgm-top-" + std::to_string(port_);
  const std::string code_file = dir_ + "/top.code";
  // `c` writes into the state folder, never the current one (a repository's, often).
  const std::string cwd = dir_ + "/cwd";
  const std::string state = dir_ + "/state";
  ASSERT_EQ(::mkdir(cwd.c_str(), 0755), 0);
  shell("tmux new-session -d -s " + session + " -x 160 -y 40 'cd " + cwd + " && XDG_STATE_HOME=" + state +
        " " + bin("eacgm") + " top --server http://127.0.0.1:" + std::to_string(port_) +
        " --interval 0.5; echo $? > " + code_file + "; sleep 30'");
  const auto pane = [&] { return shell("tmux capture-pane -p -t " + session); };
  const std::string pid = std::to_string(loop.pid());
  EXPECT_TRUE(eventually(
      [&] {
        const auto p = pane();
        return p.find(pid) != std::string::npos && p.find("capture_calls") != std::string::npos;
      },
      20s))
      << pane();
  // Numbers: a non-zero call rate on the process's line.
  EXPECT_TRUE(eventually([&] { return calls_per_second(pane(), pid + " capture_calls") > 0; }, 10s))
      << pane();
  shell("tmux send-keys -t " + session + " s");
  EXPECT_TRUE(eventually([&] { return pane().find("sort: calls/s") != std::string::npos; }, 5s)) << pane();
  shell("tmux send-keys -t " + session + " / zzzz Enter");
  EXPECT_TRUE(eventually(
      [&] {
        const auto p = pane();
        return p.find("filter: zzzz") != std::string::npos &&
               p.find("no process matches the filter") != std::string::npos;
      },
      5s))
      << pane();
  shell("tmux send-keys -t " + session + " / capture_c Enter");
  EXPECT_TRUE(eventually([&] { return pane().find(pid + " capture_calls") != std::string::npos; }, 5s))
      << pane();
  shell("tmux send-keys -t " + session + " c");
  const std::string written =
      "captured 5 s of pid " + pid + " into " + state + "/eacgm/eacgm-capture-" + pid + "-";
  EXPECT_TRUE(eventually([&] { return pane().find(written) != std::string::npos; }, 20s)) << pane();
  EXPECT_NE(shell("ls " + state + "/eacgm").find("eacgm-capture-" + pid + "-"), std::string::npos);
  EXPECT_EQ(shell("ls -A " + cwd), "") << "nothing in the current folder";
  shell("tmux send-keys -t " + session + " q");
  EXPECT_TRUE(eventually([&] { return exit_code_in(code_file) == "0"; }, 10s)) << pane();
  shell("tmux kill-session -t " + session);
}

// Whether something listens on 127.0.0.1:`port`.
bool listening(std::uint16_t port) {
  const int fd = server::testing::connect_to(port);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

TEST_F(Top, WithNoAgentAtTheDefaultAddressStartsItsOwnProbes) {
  if (shell("command -v tmux").empty()) GTEST_FAIL() << "tmux is missing (scripts/setup.sh installs it)";
  ASSERT_FALSE(listening(9977)) << "something listens on 127.0.0.1:9977, the default agent address";
  const std::string go = dir_ + "/go";
  Subprocess loop({bin("capture_calls"), "--seconds", "40", "--log", dir_ + "/calls.log", "--wait-file", go});
  ASSERT_TRUE(loop.wait_for("ready", false)) << loop.err();
  const std::string session = "eacgm-top-own-" + std::to_string(::getpid());
  const std::string code_file = dir_ + "/top.code";
  shell("tmux new-session -d -s " + session + " -x 160 -y 40 '" + bin("eacgm") +
        " top --interval 0.5; echo $? > " + code_file + "; sleep 30'");
  const auto pane = [&] { return shell("tmux capture-pane -p -t " + session); };
  EXPECT_TRUE(eventually(
      [&] { return pane().find("own probes: no agent at http://127.0.0.1:9977") != std::string::npos; }, 30s))
      << pane();
  std::ofstream(go) << "go";
  const std::string pid = std::to_string(loop.pid());
  EXPECT_TRUE(eventually([&] { return calls_per_second(pane(), pid + " capture_calls") > 0; }, 20s))
      << pane();
  shell("tmux send-keys -t " + session + " q");
  EXPECT_TRUE(eventually([&] { return exit_code_in(code_file) == "0"; }, 15s)) << pane();
  shell("tmux kill-session -t " + session);
}

TEST(TopWithoutAgent, SaysSoAndExits2) {
  Subprocess top({bin("eacgm"), "top", "--server", "http://127.0.0.1:" + std::to_string(free_port())});
  EXPECT_EQ(top.wait(), 2);
  const std::string err = top.err();
  EXPECT_NE(err.find("no agent answers"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace eacgm::test
