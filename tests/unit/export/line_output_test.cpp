// LineOutput's failures: a reader that went away (EPIPE) is told once and is not a failed
// write; other failures are counted.
#include "export/line_output.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace eacgm::exporting {
namespace {

TEST(LineOutput, AClosedPipeIsTheReaderGoneNotAFailedWrite) {
  signal(SIGPIPE, SIG_IGN);  // as eacgm runs: the write fails with EPIPE instead
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  FILE* out = fdopen(fds[1], "w");
  ASSERT_NE(out, nullptr);
  setvbuf(out, nullptr, _IONBF, 0);
  LineOutput lines(out, 0);
  int told = 0;
  lines.set_on_reader_gone([&] { ++told; });
  lines.write_lines("first\n");
  EXPECT_FALSE(lines.reader_gone());
  ::close(fds[0]);
  for (int i = 0; i < 3; ++i) {
    lines.write_lines("more\n");
    lines.flush();
  }
  EXPECT_TRUE(lines.reader_gone());
  EXPECT_EQ(told, 1);
  EXPECT_EQ(lines.write_errors(), 0u);
  std::fclose(out);
}

TEST(LineOutput, OtherFailuresAreCounted) {
  FILE* out = std::fopen("/dev/full", "w");
  if (out == nullptr) GTEST_SKIP() << "no /dev/full";
  setvbuf(out, nullptr, _IONBF, 0);
  LineOutput lines(out, 0);
  lines.write_lines("a line\n");
  lines.flush();
  EXPECT_GE(lines.write_errors(), 1u);
  EXPECT_FALSE(lines.reader_gone());
  std::fclose(out);
}

}  // namespace
}  // namespace eacgm::exporting
