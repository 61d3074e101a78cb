// Line tables: hand-made entries of each format, and, where pyenv's interpreters are
// installed, every instruction of a real function against the line CPython itself gives.
#include "ingest/python_lines.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace eacgm::ingest {
namespace {

TEST(PythonLines, LnotabPairs) {
  // From line 10: 6 bytes on line 10, then +2 lines (6 bytes), then a jump of 300 lines
  // split over two pairs (no bytes in the first), then -5 lines.
  const std::vector<std::uint8_t> t = {6, 2, 6, 127, 0, 127, 0, 46, 4, 0xfb};
  EXPECT_EQ(python_lnotab_line(t, 10, 0), 10);
  EXPECT_EQ(python_lnotab_line(t, 10, 5), 10);
  EXPECT_EQ(python_lnotab_line(t, 10, 6), 12);
  EXPECT_EQ(python_lnotab_line(t, 10, 11), 12);
  EXPECT_EQ(python_lnotab_line(t, 10, 12), 312);
  EXPECT_EQ(python_lnotab_line(t, 10, 16), 307);
  EXPECT_EQ(python_lnotab_line(t, 10, 100), 307);  // the last line runs to the end
  EXPECT_EQ(python_lnotab_line({}, 7, 4), 7);
}

TEST(PythonLines, Python310Pairs) {
  // 6 bytes on line 11, 4 bytes without a line, then 8 bytes on line 13 (from 10).
  const std::vector<std::uint8_t> t = {6, 1, 4, 0x80, 8, 2};
  EXPECT_EQ(python310_line(t, 10, 0), 11);
  EXPECT_EQ(python310_line(t, 10, 5), 11);
  EXPECT_EQ(python310_line(t, 10, 6), -1);
  EXPECT_EQ(python310_line(t, 10, 10), 13);
  EXPECT_EQ(python310_line(t, 10, 18), -1);  // past the end
}

TEST(PythonLines, Python311Forms) {
  const std::vector<std::uint8_t> t = {
      0x80 | (13 << 3) | 0, 2,           // no-column form, 1 unit, line +1 (svarint 2)
      0x80 | (11 << 3) | 1, 4, 9,        // one-line form, 2 units, line +1
      0x80 | (0 << 3) | 0,  5,           // short form, 1 unit, same line
      0x80 | (15 << 3) | 0,              // no location, 1 unit
      0x80 | (14 << 3) | 2, 7, 0, 1, 1,  // long form, 3 units, line -3 (svarint 7)
  };
  EXPECT_EQ(python311_line(t, 20, 0), 21);
  EXPECT_EQ(python311_line(t, 20, 1), 22);
  EXPECT_EQ(python311_line(t, 20, 2), 22);
  EXPECT_EQ(python311_line(t, 20, 3), 22);
  EXPECT_EQ(python311_line(t, 20, 4), -1);
  EXPECT_EQ(python311_line(t, 20, 5), 19);
  EXPECT_EQ(python311_line(t, 20, 7), 19);
  EXPECT_EQ(python311_line(t, 20, 8), -1);
  EXPECT_EQ(python311_line(std::vector<std::uint8_t>{0x05}, 1, 0), -1);  // not an entry
}

// The interpreter prints: first line, the table in hex, then per code unit its line
// (co_positions, 3.11+), per co_lines range (3.10) "start end line", or per instruction
// the line of the last line start at or before it (dis.findlinestarts, 3.9 and older).
constexpr const char* kDump = R"(
import sys
def f(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
        else:
            total -= 1
    try:
        x = [j for j in range(3)]
    except ValueError:
        pass
    return total
c = f.__code__
print(c.co_firstlineno, (c.co_linetable if sys.version_info >= (3, 10) else c.co_lnotab).hex())
if sys.version_info >= (3, 11):
    print(" ".join(str(-1 if p[0] is None else p[0]) for p in c.co_positions()))
elif sys.version_info >= (3, 10):
    print(" ".join("%d:%d:%d" % (s, e, -1 if l is None else l) for s, e, l in c.co_lines()))
else:
    import dis
    starts = list(dis.findlinestarts(c))
    print(" ".join(str([l for s, l in starts if s <= off][-1]) for off in range(0, len(c.co_code), 2)))
)";

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

TEST(PythonLines, MatchesTheInterpretersOwn) {
  std::size_t checked = 0;
  for (const auto& [release, minor] : {std::pair{"3.8.18", 8},
                                       {"3.9.18", 9},
                                       {"3.10.13", 10},
                                       {"3.11.7", 11},
                                       {"3.12.1", 12},
                                       {"3.13.0", 13}}) {
    const std::string exe =
        std::string("/root/.pyenv/versions/") + release + "/bin/python3." + std::to_string(minor);
    if (!std::filesystem::exists(exe)) continue;
    const std::string script = "/tmp/eacgm-lines-" + std::to_string(minor) + ".py";
    if (std::FILE* f = std::fopen(script.c_str(), "w")) {
      std::fputs(kDump, f);
      std::fclose(f);
    }
    std::string command = exe;
    command.append(" ").append(script);
    std::FILE* out = ::popen(command.c_str(), "r");
    ASSERT_NE(out, nullptr);
    std::string text;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, out)) text += buf;
    ASSERT_EQ(::pclose(out), 0) << exe;
    std::remove(script.c_str());
    std::istringstream in(text);
    int first = 0;
    std::string hex;
    in >> first >> hex;
    const auto table = from_hex(hex);
    std::size_t compared = 0;
    if (minor <= 9) {
      int line = 0;
      for (std::uint64_t offset = 0; in >> line; offset += 2, ++compared) {
        EXPECT_EQ(python_lnotab_line(table, first, offset), line) << "3." << minor << " byte " << offset;
      }
    } else if (minor == 10) {
      std::string range;
      while (in >> range) {
        int start = 0, end = 0, line = 0;
        ASSERT_EQ(std::sscanf(range.c_str(), "%d:%d:%d", &start, &end, &line), 3);
        for (int b = start; b < end; b += 2, ++compared)
          EXPECT_EQ(python310_line(table, first, b), line) << b;
      }
    } else {
      int line = 0;
      for (std::uint64_t unit = 0; in >> line; ++unit, ++compared) {
        EXPECT_EQ(python311_line(table, first, unit), line) << "3." << minor << " unit " << unit;
      }
    }
    EXPECT_GT(compared, 20u) << exe;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no pyenv CPython 3.8-3.13 installed";
}

}  // namespace
}  // namespace eacgm::ingest
