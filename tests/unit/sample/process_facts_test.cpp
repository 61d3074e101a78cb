// ProcFacts on real processes: the command line of a process that has exited is the one
// read while it ran (the API and the history show what ran, not ""), an exec's new
// command line replaces the old one, and a pid that a new process has is read anew.
#include "sample/process_facts.h"

#include <gtest/gtest.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
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

// `sleep 30` with RANK=rank in its environment, as process `pid` when pid > 0 (clone3's
// set_tid: root), else any. -1 when that pid cannot be had.
pid_t spawn_ranked_sleep(const char* rank, pid_t pid = 0) {
  clone_args args{};
  args.exit_signal = SIGCHLD;
  if (pid > 0) {
    args.set_tid = reinterpret_cast<std::uintptr_t>(&pid);
    args.set_tid_size = 1;
  }
  const long got = syscall(SYS_clone3, &args, sizeof args);
  if (got == 0) {
    char env[32];
    std::snprintf(env, sizeof env, "RANK=%s", rank);
    char* const envp[] = {env, nullptr};
    execle("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr), envp);
    _exit(127);
  }
  return static_cast<pid_t>(got);
}

TEST(ProcFacts, APidANewProcessHasIsReadAnew) {
  ProcFacts facts;
  const pid_t pid = spawn_ranked_sleep("3");
  ASSERT_GT(pid, 0) << std::strerror(errno);
  ASSERT_EQ(cmdline_after_exec(facts, pid), "sleep 30");
  EXPECT_EQ(facts.rank(static_cast<std::uint32_t>(pid)).rank, 3);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(facts.rank(static_cast<std::uint32_t>(pid)).rank, 3) << "kept for the process that is gone";

  // The same pid, another process: another start time (a clock tick, 10 ms, later at least;
  // a pid comes round again only after pid_max others).
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const pid_t again = spawn_ranked_sleep("5", pid);
  ASSERT_EQ(again, pid) << std::strerror(errno);
  ASSERT_EQ(cmdline_after_exec(facts, again), "sleep 30");
  EXPECT_EQ(facts.rank(static_cast<std::uint32_t>(again)).rank, 5) << "not the earlier process's rank";
  kill(again, SIGKILL);
  waitpid(again, nullptr, 0);
}

}  // namespace
}  // namespace eacgm::sample
