// CgroupScope: the cgroup v2 mount found in a mounts table (none: an error saying what to
// do), subtree membership by path components, a process's "0::" line, and opening a
// scope given as a directory or as a path inside the hierarchy (a made-up /proc and
// cgroup tree: no cgroup is created).
#include "sample/cgroup_scope.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace eacgm::sample {
namespace {

TEST(CgroupScope, FindsTheUnifiedHierarchyInTheMountsTable) {
  const std::string mounts =
      "sysfs /sys sysfs rw 0 0\n"
      "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nsdelegate 0 0\n";
  auto m = cgroup2_mount(mounts);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(*m, "/sys/fs/cgroup/unified");
  auto none = cgroup2_mount("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().find("no cgroup v2 hierarchy is mounted"), std::string::npos) << none.error();
}

TEST(CgroupScope, ASubtreeHoldsItsDescendantsOnly) {
  EXPECT_TRUE(cgroup_within("/node-a", "/node-a"));
  EXPECT_TRUE(cgroup_within("/node-a/job/rank0", "/node-a"));
  EXPECT_FALSE(cgroup_within("/node-ab", "/node-a"));
  EXPECT_FALSE(cgroup_within("/", "/node-a"));
  EXPECT_TRUE(cgroup_within("/anything", "/"));
}

class CgroupScopeOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/eacgm-cgscope-XXXXXX";
    root_ = mkdtemp(tmpl);
    mount_ = root_ + "/cgroup2";
    std::filesystem::create_directories(mount_ + "/node-a/job");
    std::ofstream(mount_ + "/node-a/cgroup.procs") << "";
    std::filesystem::create_directories(mount_ + "/plain");  // no cgroup.procs
    std::filesystem::create_directories(root_ + "/proc/self");
    std::ofstream(root_ + "/proc/self/mounts") << "cgroup2 " << mount_ << " cgroup2 rw 0 0\n";
    process(10, "12:memory:/x\n0::/node-a/job\n");
    process(11, "0::/node-ab\n");
    process(12, "12:memory:/node-a\n");  // v1 only: no "0::" line
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void process(int pid, const std::string& text) {
    std::filesystem::create_directories(root_ + "/proc/" + std::to_string(pid));
    std::ofstream(root_ + "/proc/" + std::to_string(pid) + "/cgroup") << text;
  }
  std::string root_, mount_;
};

TEST_F(CgroupScopeOnDisk, OpensAPathOrADirectoryAndTellsWhoIsInside) {
  for (const std::string& where : {std::string("/node-a"), std::string("node-a/"), mount_ + "/node-a"}) {
    auto s = CgroupScope::open(where, root_ + "/proc");
    ASSERT_TRUE(s) << where << ": " << s.error();
    EXPECT_EQ(s->path(), "/node-a") << where;
    EXPECT_EQ(s->directory(), mount_ + "/node-a") << where;
    EXPECT_GE(s->fd(), 0);
    EXPECT_TRUE(s->contains(10));
    EXPECT_FALSE(s->contains(11));
    EXPECT_FALSE(s->contains(12));
    EXPECT_FALSE(s->contains(99)) << "a process gone is outside";
  }
  EXPECT_EQ(process_cgroup(10, root_ + "/proc"), "/node-a/job");
  EXPECT_EQ(process_cgroup(12, root_ + "/proc"), std::nullopt);
}

TEST_F(CgroupScopeOnDisk, SaysWhatIsWrongWithAPath) {
  auto missing = CgroupScope::open("/node-z", root_ + "/proc");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("[trace] cgroup \"/node-z\": cannot open " + mount_ + "/node-z"),
            std::string::npos)
      << missing.error();
  EXPECT_NE(missing.error().find("create the cgroup first"), std::string::npos);
  auto plain = CgroupScope::open("/plain", root_ + "/proc");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().find("is not a cgroup v2 directory"), std::string::npos) << plain.error();
  auto empty = CgroupScope::open("", root_ + "/proc");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().find("[trace] cgroup is empty"), std::string::npos);
}

}  // namespace
}  // namespace eacgm::sample
