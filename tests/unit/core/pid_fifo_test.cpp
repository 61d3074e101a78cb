// PidFifo: at its capacity it forgets the pid put longest ago, one per new pid, spares a
// pid that `keep` asks for (then counted as put now) a bounded number of times, and a pid
// erased and put again is the newest.
#include "core/pid_fifo.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace eacgm {
namespace {

std::vector<std::uint32_t> held(const PidFifo<std::string>& f, std::uint32_t up_to) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t p = 1; p <= up_to; ++p) {
    if (f.contains(p)) out.push_back(p);
  }
  return out;
}

TEST(PidFifo, AFullFifoForgetsThePidPutLongestAgoOnePerNewPid) {
  PidFifo<std::string> f(3);
  for (std::uint32_t p = 1; p <= 3; ++p) f.put(p, "v" + std::to_string(p));
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{1, 2, 3}));
  f.put(4, "v4");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{2, 3, 4}));
  f.put(5, "v5");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{3, 4, 5}));
  ASSERT_NE(f.find(5), nullptr);
  EXPECT_EQ(*f.find(5), "v5");
  EXPECT_EQ(f.find(1), nullptr);
}

TEST(PidFifo, PuttingAHeldPidSetsItsValueAndKeepsItsPlace) {
  PidFifo<std::string> f(3);
  for (std::uint32_t p = 1; p <= 3; ++p) f.put(p, "old");
  f.put(1, "new");
  EXPECT_EQ(*f.find(1), "new");
  f.put(4, "v4");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{2, 3, 4})) << "1 was still the oldest";
}

TEST(PidFifo, ASparedPidCountsAsPutNow) {
  PidFifo<std::string> f(3);
  for (std::uint32_t p = 1; p <= 3; ++p) f.put(p, "v");
  int asked = 0;
  f.put(4, "v", [&](std::uint32_t p, const std::string&) {
    ++asked;
    return p == 1;
  });
  EXPECT_EQ(asked, 2) << "1 spared, then 2 asked";
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{1, 3, 4}));
  f.put(5, "v");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{1, 4, 5})) << "3 was older than the spared 1";
  f.put(6, "v");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{4, 5, 6}));
}

TEST(PidFifo, SparesAreBoundedSoAPutAlwaysTakesAPlace) {
  PidFifo<std::string> f(8);
  for (std::uint32_t p = 1; p <= 8; ++p) f.put(p, "v");
  int asked = 0;
  f.put(100, "v", [&](std::uint32_t, const std::string&) {
    ++asked;
    return true;
  });
  EXPECT_EQ(asked, PidFifo<std::string>::kSpares);
  EXPECT_TRUE(f.contains(100));
  EXPECT_EQ(f.size(), 8u);
  EXPECT_FALSE(f.contains(PidFifo<std::string>::kSpares + 1)) << "the oldest after the spared ones went";
}

TEST(PidFifo, AnErasedPidPutAgainIsTheNewest) {
  PidFifo<std::string> f(3);
  for (std::uint32_t p = 1; p <= 3; ++p) f.put(p, "v");
  f.erase(1);
  EXPECT_FALSE(f.contains(1));
  f.put(1, "again");  // takes the erased place: nothing held is forgotten
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{1, 2, 3}));
  f.put(4, "v");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{1, 3, 4}));
  f.put(5, "v");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{1, 4, 5}));
  f.put(6, "v");
  EXPECT_EQ(held(f, 9), (std::vector<std::uint32_t>{4, 5, 6}));
}

TEST(PidFifo, ManyPidsLeaveItAtItsCapacity) {
  PidFifo<std::string> f(64);
  for (std::uint32_t p = 1; p <= 100000; ++p) {
    f.put(p, "a command line of a short process");
    ASSERT_LE(f.size(), 64u);
  }
  EXPECT_EQ(f.size(), 64u);
  EXPECT_TRUE(f.contains(100000));
  EXPECT_TRUE(f.contains(100000 - 63));
  EXPECT_FALSE(f.contains(100000 - 64));
}

}  // namespace
}  // namespace eacgm
