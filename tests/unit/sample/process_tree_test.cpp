// process_tree: parent links from stat files (names with spaces and parentheses), tree
// membership through several generations, missing processes, and a looping chain.
#include "sample/process_tree.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace eacgm::sample {
namespace {

class ProcessTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/eacgm-proc-XXXXXX";
    root_ = mkdtemp(tmpl);
    // 1 <- 100 <- 200 ") x (" <- 300;  400 -> 401 -> 400 (corrupt loop)
    stat(100, "bash", 1);
    stat(200, "a) x (b", 100);
    stat(300, "python3", 200);
    stat(400, "loop", 401);
    stat(401, "loop", 400);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void stat(int pid, const std::string& comm, int ppid) {
    std::filesystem::create_directories(root_ + "/" + std::to_string(pid));
    std::ofstream(root_ + "/" + std::to_string(pid) + "/stat")
        << pid << " (" << comm << ") S " << ppid << " " << pid << " 0 0 -1 4194560\n";
  }
  std::string root_;
};

TEST_F(ProcessTree, ParentIsReadAfterTheLastParenthesis) {
  EXPECT_EQ(parent_pid(200, root_), 100u);
  EXPECT_EQ(parent_pid(300, root_), 200u);
  auto stat = read_proc_stat(200, root_);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 100u);
  EXPECT_FALSE(parent_pid(999, root_).has_value());
}

TEST_F(ProcessTree, MembershipFollowsGenerations) {
  EXPECT_TRUE(in_process_tree(300, {100}, root_));
  EXPECT_TRUE(in_process_tree(100, {100}, root_));
  EXPECT_TRUE(in_process_tree(300, {7, 200}, root_));
  EXPECT_FALSE(in_process_tree(100, {200}, root_));
  EXPECT_FALSE(in_process_tree(999, {100}, root_));
  EXPECT_FALSE(in_process_tree(400, {100}, root_));  // a loop ends, without a match
  EXPECT_TRUE(in_process_tree(400, {401}, root_));
}

TEST_F(ProcessTree, StopHazards) {
  // A terminal's foreground job (tty 34816, foreground group 500 = its own group).
  std::filesystem::create_directories(root_ + "/500");
  std::ofstream(root_ + "/500/stat") << "500 (python3) S 100 500 100 34816 500 4194560\n";
  auto fg = stop_hazard(500, root_);
  ASSERT_TRUE(fg.has_value());
  EXPECT_NE(fg->find("foreground job of a terminal"), std::string::npos) << *fg;
  // The same job in the background (the shell's group in the foreground): no hazard.
  std::ofstream(root_ + "/500/stat") << "500 (python3) S 100 500 100 34816 100 4194560\n";
  EXPECT_FALSE(stop_hazard(500, root_).has_value());
  // Under a debugger.
  std::ofstream(root_ + "/500/status") << "Name:\tpython3\nTracerPid:\t77\n";
  auto traced = stop_hazard(500, root_);
  ASSERT_TRUE(traced.has_value());
  EXPECT_NE(traced->find("pid 77"), std::string::npos) << *traced;
  // No terminal (a daemon, a batch job): none. Stat files of the fixture have tty 0.
  EXPECT_FALSE(stop_hazard(300, root_).has_value());
  auto stat = read_proc_stat(500, root_);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pgrp, 500);
  EXPECT_EQ(stat->tty_nr, 34816);
  EXPECT_EQ(stat->tpgid, 100);
}

TEST(ProcessTreeLive, ThisProcessDescendsFromItsParent) {
  EXPECT_EQ(parent_pid(static_cast<std::uint32_t>(getpid())), static_cast<std::uint32_t>(getppid()));
  EXPECT_TRUE(in_process_tree(static_cast<std::uint32_t>(getpid()), {getppid()}));
}

}  // namespace
}  // namespace eacgm::sample
