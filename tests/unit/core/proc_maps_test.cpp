// /proc/<pid>/maps lines: file, anonymous and special mappings, and lines that are not one.
#include "core/proc_maps.h"

#include <gtest/gtest.h>

namespace eacgm {
namespace {

TEST(ProcMaps, ParsesAFileMapping) {
  const auto m =
      parse_maps_line("7f12a000-7f12b000 r-xp 0001f000 fd:01 1234567    /usr/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->start, 0x7f12a000u);
  EXPECT_EQ(m->end, 0x7f12b000u);
  EXPECT_EQ(m->perms, "r-xp");
  EXPECT_EQ(m->offset, 0x1f000u);
  EXPECT_TRUE(m->executable());
  EXPECT_EQ(m->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(ProcMaps, AnonymousSpecialAndDeleted) {
  EXPECT_EQ(parse_maps_line("7ffd0000-7ffd1000 rw-p 00000000 00:00 0 ")->path, "");
  EXPECT_EQ(parse_maps_line("7ffd0000-7ffd1000 r-xp 00000000 00:00 0   [vdso]")->path, "[vdso]");
  EXPECT_EQ(parse_maps_line("10000-20000 r-xp 00000000 08:01 9 /tmp/a b (deleted)")->path,
            "/tmp/a b (deleted)");
  EXPECT_FALSE(parse_maps_line("10000-20000 rw-p 0 08:01 9 /x")->executable());
}

TEST(ProcMaps, RejectsWhatIsNotALine) {
  EXPECT_FALSE(parse_maps_line(""));
  EXPECT_FALSE(parse_maps_line("garbage"));
  EXPECT_FALSE(parse_maps_line("10000 r-xp 0 08:01 9 /x")) << "no range";
  EXPECT_FALSE(parse_maps_line("zz-20000 r-xp 0 08:01 9 /x"));
}

}  // namespace
}  // namespace eacgm
