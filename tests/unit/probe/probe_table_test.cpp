// Probe ids: dense, reused only after their quarantine, and a reader's cache never
// returns the previous owner of a reused id.
#include "probe/probe_table.h"

#include <gtest/gtest.h>

#include <string>

namespace eacgm::probe {
namespace {

ProbeInfo info(const std::string& function, const std::string& library = "/lib/libx.so") {
  ProbeInfo p;
  p.function = function;
  p.library = library;
  return p;
}

TEST(ProbeTable, IdsAreDenseFromZero) {
  ProbeTable t;
  EXPECT_EQ(t.add(info("a"))->id, 0u);
  EXPECT_EQ(t.add(info("b"))->id, 1u);
  EXPECT_EQ(t.add(info("c"))->id, 2u);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.live(), 3u);
  EXPECT_EQ(t.get(1)->function, "b");
  EXPECT_EQ(t.get(3), nullptr);
}

TEST(ProbeTable, RemovedIdKeepsItsInfoWhileQuarantined) {
  ProbeTable t;
  t.add(info("a"));
  t.add(info("b"));
  t.remove(0);
  EXPECT_FALSE(t.is_live(0));
  EXPECT_TRUE(t.is_live(1));
  EXPECT_EQ(t.live(), 1u);
  EXPECT_EQ(t.quarantined(), 1u);
  // Records already queued still decode against the old probe.
  ASSERT_NE(t.get(0), nullptr);
  EXPECT_EQ(t.get(0)->function, "a");
  // Removing twice, or an unknown id, changes nothing.
  t.remove(0);
  t.remove(99);
  EXPECT_EQ(t.live(), 1u);
  EXPECT_EQ(t.quarantined(), 1u);
}

TEST(ProbeTable, IdIsReusedOnlyAfterAWholeQuarantinePeriod) {
  ProbeTable t;
  t.add(info("a"));
  t.add(info("b"));
  t.remove(0);
  // Still in the period it was removed in: a new probe gets a new id.
  EXPECT_EQ(t.add(info("c"))->id, 2u);
  t.end_period();  // that period ends: the id has not waited a whole period yet
  EXPECT_EQ(t.add(info("d"))->id, 3u);
  EXPECT_EQ(t.quarantined(), 1u);
  t.end_period();  // one whole period later: free
  EXPECT_EQ(t.quarantined(), 0u);
  auto e = t.add(info("e"));
  EXPECT_EQ(e->id, 0u);
  EXPECT_EQ(t.get(0)->function, "e");
  EXPECT_TRUE(t.is_live(0));
  EXPECT_EQ(t.size(), 4u);  // no new id was needed
  EXPECT_EQ(t.add(info("f"))->id, 4u);
}

TEST(ProbeTable, ChurnKeepsTheTableBounded) {
  ProbeTable t;
  for (int round = 0; round < 100; ++round) {
    auto p = t.add(info("f" + std::to_string(round)));
    t.remove(p->id);
    t.end_period();
  }
  EXPECT_EQ(t.live(), 0u);
  EXPECT_LE(t.size(), 3u);
}

TEST(ProbeTable, GenerationMovesOnlyOnReuse) {
  ProbeTable t;
  const auto g0 = t.generation();
  t.add(info("a"));
  t.remove(0);
  t.end_period();
  t.end_period();
  EXPECT_EQ(t.generation(), g0);
  t.add(info("b"));
  EXPECT_NE(t.generation(), g0);
}

TEST(ProbeCache, ReturnsTheNewOwnerOfAReusedId) {
  ProbeTable t;
  t.add(info("old", "/tmp/a/libchurn.so"));
  ProbeCache cache(t);
  ASSERT_NE(cache.get(0), nullptr);
  EXPECT_EQ(cache.get(0)->library, "/tmp/a/libchurn.so");
  t.remove(0);
  // Quarantined: late records still get the old probe.
  EXPECT_EQ(cache.get(0)->function, "old");
  t.end_period();
  t.end_period();
  t.add(info("new", "/tmp/b/libchurn.so"));
  ASSERT_NE(cache.get(0), nullptr);
  EXPECT_EQ(cache.get(0)->function, "new");
  EXPECT_EQ(cache.get(0)->library, "/tmp/b/libchurn.so");
}

TEST(ProbeCache, MissRefreshesAndUnknownIdIsNull) {
  ProbeTable t;
  ProbeCache cache(t);
  EXPECT_EQ(cache.get(0), nullptr);
  t.add(info("a"));
  ASSERT_NE(cache.get(0), nullptr);
  EXPECT_EQ(cache.get(0)->function, "a");
  EXPECT_EQ(cache.get(7), nullptr);
}

}  // namespace
}  // namespace eacgm::probe
