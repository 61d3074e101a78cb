// InflightCalls: the waiting calls in flight past the minimum age, from scans of the
// kernel's table: their age at the scan, oldest first, the young ones and those of
// threads that no longer run left out, each scan replacing the last, and the cap.
#include "analysis/inflight_calls.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <utility>
#include <vector>

#include "../common/cuda_probe.h"
#include "analysis/live_analysis.h"

namespace eacgm::analysis {
namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;
constexpr std::uint64_t kScan = 1000 * kSecond;  // a scan's CLOCK_MONOTONIC time

InflightCall in_flight(std::uint32_t pid, std::uint32_t tid, std::uint64_t entry_mono_ns,
                       const char* function = "cudaStreamSynchronize") {
  InflightCall c;
  c.call.probe = test::cuda_probe(function);
  c.call.pid = pid;
  c.call.tid = tid;
  c.entry_mono_ns = entry_mono_ns;
  return c;
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> tids_and_ages(const InflightSummary& s) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const auto& r : s.rows) out.emplace_back(r.call.call.tid, r.age_ns);
  return out;
}

TEST(InflightCalls, ListsTheCallsPastTheMinimumAgeOldestFirstWithTheirAge) {
  InflightCalls inflight(5 * kSecond);
  inflight.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  const std::vector<InflightCall> calls{
      in_flight(10, 11, kScan - 6 * kSecond), in_flight(10, 12, kScan - 2 * kSecond),   // too young
      in_flight(20, 21, kScan - 90 * kSecond), in_flight(30, 31, kScan - 5 * kSecond),  // exactly the age
      in_flight(40, 41, kScan + kSecond)};  // entered after the scan
  inflight.update(calls, kScan);
  const InflightSummary& s = inflight.summary();
  EXPECT_EQ(s.min_age_ns, 5 * kSecond);
  EXPECT_EQ(s.scan_mono_ns, kScan);
  EXPECT_EQ(s.in_flight, 5u);
  EXPECT_EQ(tids_and_ages(s), (std::vector<std::pair<std::uint32_t, std::uint64_t>>{
                                  {21, 90 * kSecond}, {11, 6 * kSecond}, {31, 5 * kSecond}}));
  EXPECT_EQ(s.over_cap, 0u);
}

TEST(InflightCalls, TheAgeGrowsFromScanToScanAndAReturnedCallLeaves) {
  InflightCalls inflight(kSecond);
  inflight.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  const InflightCall stuck = in_flight(10, 11, kScan - 3 * kSecond);
  const InflightCall other = in_flight(10, 12, kScan - 2 * kSecond);
  inflight.update(std::vector{stuck, other}, kScan);
  ASSERT_EQ(inflight.summary().rows.size(), 2u);
  EXPECT_EQ(inflight.summary().rows[0].age_ns, 3 * kSecond);
  // A second later the other call has returned: it is not in the table any more.
  inflight.update(std::vector{stuck}, kScan + kSecond);
  EXPECT_EQ(tids_and_ages(inflight.summary()),
            (std::vector<std::pair<std::uint32_t, std::uint64_t>>{{11, 4 * kSecond}}));
  inflight.update({}, kScan + 2 * kSecond);
  EXPECT_TRUE(inflight.summary().rows.empty());
  EXPECT_EQ(inflight.summary().in_flight, 0u);
}

TEST(InflightCalls, CallsOfThreadsThatNoLongerRunAreLeftOut) {
  InflightCalls inflight(kSecond);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> checked;
  inflight.set_thread_alive([&](std::uint32_t pid, std::uint32_t tid) {
    checked.emplace_back(pid, tid);
    return tid != 12;  // thread 12 was killed inside its call
  });
  inflight.update(std::vector{in_flight(10, 11, kScan - 9 * kSecond), in_flight(10, 12, kScan - 8 * kSecond),
                              in_flight(10, 13, kScan)},
                  kScan);
  EXPECT_EQ(tids_and_ages(inflight.summary()),
            (std::vector<std::pair<std::uint32_t, std::uint64_t>>{{11, 9 * kSecond}}));
  // Only the calls old enough to be listed are checked.
  EXPECT_EQ(std::set(checked.begin(), checked.end()),
            (std::set<std::pair<std::uint32_t, std::uint32_t>>{{10, 11}, {10, 12}}));
  EXPECT_EQ(inflight.summary().in_flight, 3u);
  // ... once: a call listed stays listed while the table holds it (an exiting thread
  // takes its entry out), and a thread's next call is checked again.
  checked.clear();
  inflight.update(std::vector{in_flight(10, 11, kScan - 9 * kSecond)}, kScan + kSecond);
  EXPECT_TRUE(checked.empty());
  EXPECT_EQ(inflight.summary().rows.size(), 1u);
  inflight.update(std::vector{in_flight(10, 11, kScan - kSecond)}, kScan + 2 * kSecond);
  EXPECT_EQ(checked, (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{10, 11}}));
  EXPECT_EQ(inflight.summary().rows.size(), 1u);
}

TEST(InflightCalls, ThisThreadRunsAndAThreadOfNoProcessDoesNot) {
  EXPECT_TRUE(thread_alive(static_cast<std::uint32_t>(getpid()), static_cast<std::uint32_t>(gettid())));
  EXPECT_FALSE(thread_alive(static_cast<std::uint32_t>(getpid()), 0x7ffffffe));
}

TEST(InflightCalls, EqualAgesAreOrderedByProcessAndThread) {
  InflightCalls inflight(0);
  inflight.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  inflight.update(std::vector{in_flight(20, 2, kScan - kSecond), in_flight(10, 9, kScan - kSecond),
                              in_flight(10, 3, kScan - kSecond)},
                  kScan);
  std::vector<std::uint32_t> tids;
  for (const auto& r : inflight.summary().rows) tids.push_back(r.call.call.tid);
  EXPECT_EQ(tids, (std::vector<std::uint32_t>{3, 9, 2}));
}

TEST(InflightCalls, ANewMinimumAgeAppliesFromTheNextScan) {
  InflightCalls inflight(10 * kSecond);
  inflight.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  const std::vector<InflightCall> calls{in_flight(10, 11, kScan - 3 * kSecond)};
  inflight.update(calls, kScan);
  EXPECT_TRUE(inflight.summary().rows.empty());
  inflight.set_min_age_ns(2 * kSecond);
  EXPECT_TRUE(inflight.summary().rows.empty());
  inflight.update(calls, kScan);
  EXPECT_EQ(inflight.summary().rows.size(), 1u);
  EXPECT_EQ(inflight.summary().min_age_ns, 2 * kSecond);
}

TEST(InflightCalls, PastTheCapTheYoungestAreCounted) {
  InflightCalls inflight(0);
  inflight.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  std::vector<InflightCall> calls;
  const std::uint64_t scan = 100'000 * kSecond;
  for (std::uint32_t i = 0; i < InflightCalls::kMaxRows + 5; ++i) {
    calls.push_back(in_flight(1, 100 + i, scan - (i + 1) * kSecond));
  }
  inflight.update(calls, scan);
  const InflightSummary& s = inflight.summary();
  ASSERT_EQ(s.rows.size(), InflightCalls::kMaxRows);
  EXPECT_EQ(s.over_cap, 5u);
  EXPECT_EQ(s.rows.front().age_ns, (InflightCalls::kMaxRows + 5) * kSecond);
  EXPECT_EQ(s.rows.back().age_ns, 6 * kSecond);
}

TEST(InflightCalls, TheLiveAnalysisPublishesTheLastScanAndItsMinimumAge) {
  LiveAnalysis live;
  AnalysisSettings settings;
  settings.inflight_min_age_ns = 2 * kSecond;
  live.configure(settings);
  live.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  live.on_inflight(std::vector{in_flight(10, 11, kScan - 7 * kSecond, "ncclAllReduce")}, kScan);
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  auto snap = live.snapshot();
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->get<analysis::InflightSummary>().rows.size(), 1u);
  EXPECT_EQ(snap->get<analysis::InflightSummary>().rows[0].call.call.function(), "ncclAllReduce");
  EXPECT_EQ(snap->get<analysis::InflightSummary>().rows[0].age_ns, 7 * kSecond);
  EXPECT_EQ(snap->get<analysis::InflightSummary>().min_age_ns, 2 * kSecond);
  // The final snapshot has the calls still in flight at the last scan.
  live.on_inflight({}, kScan + kSecond);
  live.on_end(CounterValues{});
  EXPECT_TRUE(live.snapshot()->final);
  EXPECT_TRUE(live.snapshot()->get<InflightSummary>().rows.empty());
}

TEST(InflightCalls, TheDefaultMinimumAgeIsFiveSeconds) {
  EXPECT_EQ(InflightCalls().summary().min_age_ns, 0u);  // nothing scanned yet
  InflightCalls inflight;
  inflight.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  inflight.update(std::vector{in_flight(1, 2, kScan - 4 * kSecond)}, kScan);
  EXPECT_TRUE(inflight.summary().rows.empty());
  EXPECT_EQ(inflight.summary().min_age_ns, 5 * kSecond);
}

}  // namespace
}  // namespace eacgm::analysis
