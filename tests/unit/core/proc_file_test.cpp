// read_small_file: whole files, the limit, and failures as nullopt (never an exception).
#include "core/proc_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace eacgm {
namespace {

TEST(ReadSmallFile, WholeFileUpToTheLimit) {
  char path[] = "/tmp/eacgm-small-file-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string text(10000, 'x');
  std::ofstream(path) << text;
  EXPECT_EQ(read_small_file(path), text) << "more than one read's worth";
  EXPECT_EQ(read_small_file(path, 5), "xxxxx");
  EXPECT_EQ(read_small_file(path, 5)->capacity() < 64, true) << "no buffer kept behind it";
  ::unlink(path);
}

TEST(ReadSmallFile, FailuresAreNullopt) {
  EXPECT_EQ(read_small_file("/nonexistent/eacgm"), std::nullopt);
  EXPECT_EQ(read_small_file("/tmp"), std::nullopt) << "a read that fails after the open (EISDIR)";
  EXPECT_TRUE(read_small_file("/proc/self/status").has_value());
}

}  // namespace
}  // namespace eacgm
