// A process's end, both ways: alive until it exits (a zombie is not), exists until it is
// reaped.
#include "core/proc_stat.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace eacgm {
namespace {

TEST(ProcStat, OurselvesAliveAndExisting) {
  const auto self = static_cast<std::uint32_t>(getpid());
  EXPECT_TRUE(process_alive(self));
  EXPECT_TRUE(process_exists(self));
  EXPECT_FALSE(process_alive(0x7ffffff0u));
  EXPECT_FALSE(process_exists(0x7ffffff0u));
  // 0 and values past pid_t would name our process group or every process.
  EXPECT_FALSE(process_exists(0));
  EXPECT_FALSE(process_exists(0xffffffffu));
}

TEST(ProcStat, AZombieExistsButIsNotAlive) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  const auto pid = static_cast<std::uint32_t>(child);
  // Not reaped yet: a zombie once it has exited.
  for (int i = 0; i < 500 && process_alive(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(process_alive(pid));
  EXPECT_TRUE(process_exists(pid));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(process_exists(pid));
}

}  // namespace
}  // namespace eacgm
