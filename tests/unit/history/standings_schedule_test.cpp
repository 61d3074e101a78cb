// When the fleet link writes the node's NCCL rank standings and reads the job's: each
// second while a rank waits (here or in the rows last read) or the ranks changed, else
// once per interval; never a read without ranks here, never a write with none to replace.
#include "history/standings_schedule.h"

#include <gtest/gtest.h>

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

StandingsMoment quiet(std::int64_t since) {
  StandingsMoment m;
  m.has_rows = true;
  m.had_rows = true;
  m.since_written_ns = since;
  m.since_read_ns = since;
  m.interval_ns = 10 * kS;
  return m;
}

TEST(StandingsSchedule, NothingWaitsOrChangedOncePerInterval) {
  for (std::int64_t since : {std::int64_t{1} * kS, 5 * kS, 9 * kS}) {
    const StandingsDue due = standings_due(quiet(since));
    EXPECT_FALSE(due.write) << since;
    EXPECT_FALSE(due.read) << since;
  }
  const StandingsDue due = standings_due(quiet(10 * kS));
  EXPECT_TRUE(due.write);
  EXPECT_TRUE(due.read);
}

TEST(StandingsSchedule, ARankWaitingHereWritesAndReadsEachSecond) {
  StandingsMoment m = quiet(kS);
  m.waiting_here = true;
  EXPECT_TRUE(standings_due(m).write);
  EXPECT_TRUE(standings_due(m).read);
  m.since_written_ns = m.since_read_ns = kStandingsEveryNs - 1;
  EXPECT_FALSE(standings_due(m).write) << "not twice in a second";
  EXPECT_FALSE(standings_due(m).read);
}

TEST(StandingsSchedule, ARankWaitingElsewhereReadsEachSecondWithoutWriting) {
  StandingsMoment m = quiet(kS);
  m.waiting_read = true;
  EXPECT_FALSE(standings_due(m).write) << "this node's rows did not change";
  EXPECT_TRUE(standings_due(m).read);
}

TEST(StandingsSchedule, AChangeWritesAndReadsAtOnce) {
  StandingsMoment m = quiet(kS);
  m.changed = true;
  EXPECT_TRUE(standings_due(m).write);
  EXPECT_TRUE(standings_due(m).read);
}

TEST(StandingsSchedule, RanksGoneAreWrittenAwayAndNothingIsRead) {
  StandingsMoment m = quiet(kS);
  m.has_rows = false;
  m.changed = true;
  EXPECT_TRUE(standings_due(m).write) << "its rows go";
  EXPECT_FALSE(standings_due(m).read);
  m.had_rows = false;
  m.changed = false;
  m.since_written_ns = m.since_read_ns = 100 * kS;
  EXPECT_FALSE(standings_due(m).write) << "no ranks now or before: nothing to write";
  EXPECT_FALSE(standings_due(m).read);
}

}  // namespace
}  // namespace eacgm::history
