// UniqueFd: the descriptor closes with its owner, moves with ownership and stays open
// once released.
#include "core/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace eacgm {
namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// Whether fd is closed: F_GETFD fails with EBADF. Checked before any other open, which
// could take the same number.
bool is_closed(int fd) {
  errno = 0;
  return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

int open_null() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFd, EmptyOwnsNothing) {
  const UniqueFd fd;
  EXPECT_FALSE(fd);
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
  EXPECT_FALSE(UniqueFd(-1).valid());
}

TEST(UniqueFd, ClosesOnDestruction) {
  const int raw = open_null();
  ASSERT_GE(raw, 0);
  {
    const UniqueFd fd(raw);
    EXPECT_TRUE(fd);
    EXPECT_EQ(fd.get(), raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_TRUE(is_closed(raw));
}

TEST(UniqueFd, MoveTransfersOwnership) {
  const int raw = open_null();
  ASSERT_GE(raw, 0);
  UniqueFd from(raw);
  {
    const UniqueFd to(std::move(from));
    EXPECT_FALSE(from);  // NOLINT(bugprone-use-after-move): moved-from owns nothing
    EXPECT_EQ(to.get(), raw);
    from.reset();  // owns nothing: closes nothing
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_TRUE(is_closed(raw));
}

TEST(UniqueFd, MoveAssignmentClosesTheOldDescriptor) {
  const int first = open_null();
  const int second = open_null();
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  UniqueFd a(first);
  UniqueFd b(second);
  a = std::move(b);
  EXPECT_TRUE(is_closed(first));
  EXPECT_EQ(a.get(), second);
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): moved-from owns nothing
  a.reset();
  EXPECT_TRUE(is_closed(second));
}

TEST(UniqueFd, ReleaseGivesItUp) {
  const int raw = open_null();
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_EQ(fd.release(), raw);
    EXPECT_FALSE(fd);
  }
  EXPECT_TRUE(is_open(raw));
  ::close(raw);
  EXPECT_TRUE(is_closed(raw));
}

TEST(UniqueFd, ResetClosesAndTakesTheNew) {
  const int first = open_null();
  const int second = open_null();
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  UniqueFd fd(first);
  fd.reset(second);
  EXPECT_TRUE(is_closed(first));
  EXPECT_EQ(fd.get(), second);
  fd.reset();
  EXPECT_TRUE(is_closed(second));
  EXPECT_FALSE(fd);
}

}  // namespace
}  // namespace eacgm
