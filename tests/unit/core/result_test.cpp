// Result and Status: an error's kind and errno travel with its message, through
// take_error into a result of another type, so a caller far from the system call can
// still branch on ENOENT or EPERM.
#include "core/result.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <utility>

namespace eacgm {
namespace {

Result<int> open_config() {
  return make_errno_error(ENOENT, "cannot open /etc/x.toml: No such file or directory");
}

Status load_config() {
  auto r = open_config();
  if (!r) return std::move(r).take_error();
  return {};
}

Result<std::string> start() {
  if (auto st = load_config(); !st) return std::move(st).take_error();
  return std::string("started");
}

TEST(Result, ErrnoSurvivesResultOfAValue) {
  const Result<int> r = open_config();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "cannot open /etc/x.toml: No such file or directory");
  EXPECT_EQ(r.error_errno(), ENOENT);
  EXPECT_EQ(r.error_kind(), ErrorKind::kFailure);
}

TEST(Result, ErrnoSurvivesStatusAndTakeError) {
  const Status st = load_config();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error_errno(), ENOENT);
  EXPECT_EQ(st.error(), "cannot open /etc/x.toml: No such file or directory");

  const Result<std::string> r = start();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error_errno(), ENOENT);
  EXPECT_EQ(r.error(), "cannot open /etc/x.toml: No such file or directory");

  Status taken_from = make_errno_error(EPERM, "refused");
  const Error e = std::move(taken_from).take_error();
  EXPECT_EQ(e.sys_errno, EPERM);
  EXPECT_EQ(e.message, "refused");
  EXPECT_EQ(e.kind, ErrorKind::kFailure);
}

TEST(Result, LibbpfErrorsKeepThePositiveErrno) {
  // libbpf returns the negated errno.
  const Status st = make_errno_error(-EACCES, "cannot load");
  EXPECT_EQ(st.error_errno(), EACCES);
}

TEST(Result, ErrorsWithoutASystemCallHaveNoErrno) {
  const Result<int> r = make_error("no command given after --");
  EXPECT_EQ(r.error_errno(), 0);
  const Status st = make_error(ErrorKind::kUsage, "bad option");
  EXPECT_EQ(st.error_errno(), 0);
  EXPECT_EQ(st.error_kind(), ErrorKind::kUsage);
  EXPECT_TRUE(Status{});
  EXPECT_EQ(Status{}.error_errno(), 0);
}

}  // namespace
}  // namespace eacgm
