// A process's start time: the boot time is read from /proc/stat's btime line without
// throwing on text that holds none; this process's start is between the boot and now.
#include "sample/process_start.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

namespace eacgm::sample {
namespace {

TEST(ProcessStart, TheBootTimeIsReadFromItsLine) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nintr 5 6\nctxt 7\nbtime 1793491200\nprocesses 9\n"), 1793491200);
  EXPECT_EQ(parse_boot_time("btime 42"), 42);
  EXPECT_EQ(parse_boot_time("btime  17\n"), 17);
}

TEST(ProcessStart, TextWithoutABootTimeHasNone) {
  for (const char* text : {"", "cpu 1 2 3\nctxt 7\n", "btime \n", "btime x\n",
                           "btime 99999999999999999999999\n", "xbtime 5\n"}) {
    EXPECT_FALSE(parse_boot_time(text)) << text;
  }
}

TEST(ProcessStart, ThisProcessStartedBeforeNow) {
  const auto start = proc_start_ns(static_cast<std::uint32_t>(getpid()));
  ASSERT_TRUE(start);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  // Clock ticks are 10 ms; the boot time is whole seconds.
  EXPECT_LE(*start, now + 1'000'000'000);
  EXPECT_GT(*start, now - 24LL * 3600 * 1'000'000'000);
  EXPECT_FALSE(proc_start_ns(0));
}

}  // namespace
}  // namespace eacgm::sample
