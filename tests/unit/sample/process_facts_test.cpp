// ProcFacts on real processes: the command line of a process that has exited is the one
// read while it ran (the API and the history show what ran, not ""), and an exec's new
// command line replaces the old one.
#include "sample/process_facts.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace eacgm::sample {
namespace {

pid_t spawn_sleep(const char* seconds) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", seconds, static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Until the child has exec'd (before that it is a copy of this test).
std::string cmdline_after_exec(const ProcFacts& facts, pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    std::string c = facts.cmdline(static_cast<std::uint32_t>(pid));
    if (c.rfind("sleep ", 0) == 0) return c;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

TEST(ProcFacts, CommandLineOutlivesTheProcess) {
  ProcFacts facts;
  const pid_t pid = spawn_sleep("30");
  ASSERT_GT(pid, 0);
  const std::string c = cmdline_after_exec(facts, pid);
  EXPECT_EQ(c, "sleep 30");
  // Kept per process by its callers (the history's records): no 4 KiB read buffer behind it.
  EXPECT_LT(c.capacity(), 64u);
  EXPECT_TRUE(facts.alive(static_cast<std::uint32_t>(pid)));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_FALSE(facts.alive(static_cast<std::uint32_t>(pid)));
  EXPECT_EQ(facts.cmdline(static_cast<std::uint32_t>(pid)), "sleep 30") << "kept after the exit";
}

TEST(ProcFacts, AProcessNeverSeenRunningHasNoCommandLine) {
  ProcFacts facts;
  const pid_t pid = spawn_sleep("0");
  ASSERT_GT(pid, 0);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(facts.cmdline(static_cast<std::uint32_t>(pid)), "");
}

}  // namespace
}  // namespace eacgm::sample
