// Where a trace's output goes: a reader that goes away (`eacgm trace | head`) ends the
// trace as Ctrl-C would, with exit status 141 and no complaint about the disk.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "subprocess.h"

namespace eacgm::test {
namespace {

TEST(TraceOutput, AReaderThatGoesAwayEndsTheTraceQuietly) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  // Without the reader's going, the loop would run for many minutes.
  const std::string pipeline = bin("eacgm") + " trace -- " + bin("driver_loop") +
                               " --iters 1000000000 | head -n 2; exit ${PIPESTATUS[0]}";
  Subprocess shell({"/bin/bash", "-c", pipeline});
  EXPECT_EQ(shell.wait(std::chrono::seconds(60)), 141) << shell.err();
  const std::string out = shell.out();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
  EXPECT_EQ(shell.err().find("failed"), std::string::npos) << shell.err();
  EXPECT_NE(shell.err().find("eacgm: done events="), std::string::npos) << shell.err();
}

}  // namespace
}  // namespace eacgm::test
