// read_small_file: whole files, the limit, and failures as nullopt (never an exception);
// read_file_into: the same with the failure's errno; read_file_at; the field readers.
#include "core/proc_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace eacgm {
namespace {

// A new file under /tmp holding `text`; its path.
std::string file_with(const std::string& text) {
  char path[] = "/tmp/eacgm-proc-file-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd >= 0) ::close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST(ReadSmallFile, WholeFileUpToTheLimit) {
  const std::string text(10000, 'x');
  const std::string path = file_with(text);
  EXPECT_EQ(read_small_file(path), text) << "more than one read's worth";
  EXPECT_EQ(read_small_file(path, 5), "xxxxx");
  EXPECT_EQ(read_small_file(path, 5)->capacity() < 64, true) << "no buffer kept behind it";
  ::unlink(path.c_str());
}

TEST(ReadSmallFile, FailuresAreNullopt) {
  EXPECT_EQ(read_small_file("/nonexistent/eacgm"), std::nullopt);
  EXPECT_EQ(read_small_file("/tmp"), std::nullopt) << "a read that fails after the open (EISDIR)";
  EXPECT_TRUE(read_small_file("/proc/self/status").has_value());
}

TEST(ReadSmallFile, AShortFileKeepsNoLargeBuffer) {
  const auto status = read_small_file("/proc/self/comm");
  ASSERT_TRUE(status.has_value());
  EXPECT_LT(status->capacity(), 64u) << "a 64 KiB limit, a comm of a few bytes";
}

TEST(ReadFileInto, TheWholeFileOrTheFailuresErrno) {
  const std::string text(200000, 'y');
  const std::string path = file_with(text);
  std::string out = "old";
  EXPECT_EQ(read_file_into(path, out), 0);
  EXPECT_EQ(out, text) << "several reads' worth, no limit";
  EXPECT_EQ(read_file_into(path, out, 7), 0);
  EXPECT_EQ(out, "yyyyyyy");
  ::unlink(path.c_str());
  EXPECT_EQ(read_file_into(path, out), ENOENT);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(read_file_into("/tmp", out), EISDIR);
  EXPECT_EQ(read_file_into("/proc/self/maps", out), 0);
  EXPECT_NE(out.find('\n'), std::string::npos) << "a /proc file (size 0) read whole";
}

TEST(ReadFileAt, BytesAtAnOffsetOrNothing) {
  const std::string path = file_with("0123456789");
  EXPECT_EQ(read_file_at(path, 3, 4), "3456");
  EXPECT_EQ(read_file_at(path, 8, 4), std::nullopt) << "fewer bytes there";
  EXPECT_EQ(read_file_at("/nonexistent/x", 0, 1), std::nullopt);
  ::unlink(path.c_str());
}

TEST(ProcFields, LinesFieldsAndNumbers) {
  std::string_view text = "Name:\tbash\nTracerPid:\t  42\nCapEff:\t000001ffffffffff\n";
  EXPECT_EQ(next_line(text), "Name:\tbash");
  EXPECT_EQ(text.substr(0, 10), "TracerPid:");
  std::string_view tracer = line_after("a\nTracerPid:\t  42\n", "TracerPid:").value();
  EXPECT_EQ(next_field(tracer), "42");
  EXPECT_EQ(next_field(tracer), "");
  EXPECT_EQ(line_after("a\nb\n", "c:"), std::nullopt);

  std::uint64_t mask = 0;
  EXPECT_TRUE(parse_number("000001ffffffffff", mask, 16));
  EXPECT_EQ(mask, 0x1ffffffffffu);
  int n = 7;
  EXPECT_FALSE(parse_number("12x", n)) << "the whole field or nothing";
  EXPECT_FALSE(parse_number("", n));
  EXPECT_FALSE(parse_number("99999999999", n)) << "out of range";
  EXPECT_FALSE(parse_number("-1", mask));
  EXPECT_EQ(n, 7) << "unchanged by a failure";
  EXPECT_TRUE(parse_number("-12", n));
  EXPECT_EQ(n, -12);
}

}  // namespace
}  // namespace eacgm
