// Windows of time from text: ages, Unix seconds, UTC times, their errors; page sizes and
// the cursors of the pages after the first.
#include "history/history_window.h"

#include <gtest/gtest.h>

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kNow = 1'790'000'000 * kS;

TEST(HistoryWindow, Ages) {
  EXPECT_EQ(*parse_age("90s"), 90 * kS);
  EXPECT_EQ(*parse_age("15m"), 900 * kS);
  EXPECT_EQ(*parse_age("1.5h"), 5400 * kS);
  EXPECT_EQ(*parse_age("7d"), 7 * 86400 * kS);
  EXPECT_EQ(*parse_age("2w"), 14 * 86400 * kS);
  for (const char* bad : {"", "h", "1", "1y", "-1h", "yesterday", "1hh"}) EXPECT_FALSE(parse_age(bad)) << bad;
}

TEST(HistoryWindow, Times) {
  EXPECT_EQ(*parse_time("1789990000", kNow), 1'789'990'000 * kS);
  EXPECT_EQ(*parse_time("2h", kNow), kNow - 7200 * kS);
  EXPECT_EQ(*parse_time("2026-11-28T10:00:00Z", kNow), 1'795'860'000 * kS);
  EXPECT_EQ(*parse_time("2026-11-28T10:00:00", kNow), 1'795'860'000 * kS);
  auto bad = parse_time("28/11/2026", kNow);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("Unix seconds"), std::string::npos);
}

TEST(HistoryWindow, DefaultsToTheLastHourWithAboutTwoHundredFortyPoints) {
  auto q = make_window({}, kNow);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->from_ns, kNow - 3600 * kS);
  EXPECT_GT(q->to_ns, kNow);
  EXPECT_EQ(q->step_ns, 60 * kS);
  WindowText week;
  week.since = "7d";
  auto w = make_window(week, kNow);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->step_ns, 2520 * kS);  // 42 minutes: 240 points over a week
}

TEST(HistoryWindow, ErrorsNameTheParameter) {
  WindowText both;
  both.since = "1h";
  both.from = "2h";
  EXPECT_FALSE(make_window(both, kNow));
  WindowText backwards;
  backwards.from = "1h";
  backwards.until = "2h";
  auto b = make_window(backwards, kNow);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error(), "the window ends before it starts");
  WindowText bad_step;
  bad_step.step = "0s";
  auto s = make_window(bad_step, kNow);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().rfind("step:", 0), 0u) << s.error();
  WindowText bad_since;
  bad_since.since = "soon";
  auto since = make_window(bad_since, kNow);
  ASSERT_FALSE(since);
  EXPECT_EQ(since.error().rfind("since:", 0), 0u) << since.error();
}

TEST(HistoryWindow, PageSizesAndCursors) {
  EXPECT_EQ(parse_limit("20").value(), 20u);
  for (const char* bad : {"0", "-1", "abc", "20x", "10001"}) {
    auto l = parse_limit(bad);
    ASSERT_FALSE(l) << bad;
    EXPECT_EQ(l.error(), "\"" + std::string(bad) + "\" is not a number from 1 to 10000");
  }
  HistoryQuery q;
  q.from_ns = kNow - 3600 * kS;
  q.to_ns = kNow;
  HistoryQuery next;
  ASSERT_TRUE(apply_cursor(page_cursor(q, 40), next));
  EXPECT_EQ(next.offset, 40u);
  EXPECT_EQ(next.from_ns, q.from_ns);
  EXPECT_EQ(next.to_ns, q.to_ns);
  for (const char* bad : {"", "40", "40.1", "40.2.1", "a.b.c", "40.1.2.3", "-1.1.2"}) {
    auto st = apply_cursor(bad, next);
    ASSERT_FALSE(st) << bad;
    EXPECT_NE(st.error().find("is not a cursor this agent gave"), std::string::npos) << st.error();
  }
}

}  // namespace
}  // namespace eacgm::history
