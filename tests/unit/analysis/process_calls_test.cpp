// ProcessCalls: a summary per process, the process cap, exits let go after kKeepExited
// (or after kMinKeepExited when a new process needs the place),
// and views that share the summaries of processes that made no call since.
#include "analysis/process_calls.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace eacgm::analysis {
namespace {

std::shared_ptr<const ProbeInfo> probe(const std::string& function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.name = function;
  p->spec.domain = "cuda";
  p->spec.with_exit = true;
  return p;
}

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, std::uint64_t dur) {
  CallEvent e;
  e.probe = p;
  e.pid = pid;
  e.has_exit = true;
  e.dur_ns = dur;
  return e;
}

TEST(ProcessCalls, KeepsASummaryPerProcess) {
  auto p = probe("cudaMalloc");
  ProcessCalls calls;
  for (int i = 0; i < 3; ++i) calls.add(call(p, 1, 100));
  calls.add(call(p, 2, 100));
  CallCount counted;
  counted.pid = 2;
  counted.probe = p;
  counted.calls = 10;
  calls.add(counted);
  auto v = calls.view();
  ASSERT_EQ(v->processes.size(), 2u);
  EXPECT_EQ(v->processes.at(1).calls->rows().front().calls, 3u);
  EXPECT_EQ(v->processes.at(2).calls->rows().front().calls, 11u);
}

TEST(ProcessCalls, ViewsShareTheSummariesOfQuietProcesses) {
  auto p = probe("cudaFree");
  ProcessCalls calls;
  calls.add(call(p, 1, 5));
  calls.add(call(p, 2, 5));
  auto first = calls.view();
  calls.add(call(p, 2, 5));
  auto second = calls.view();
  EXPECT_EQ(first->processes.at(1).calls, second->processes.at(1).calls) << "pid 1 made no call: shared";
  EXPECT_NE(first->processes.at(2).calls, second->processes.at(2).calls);
  EXPECT_EQ(first->processes.at(2).calls->rows().front().calls, 1u) << "a published view never changes";
}

TEST(ProcessCalls, CapsProcessesAndCountsTheRest) {
  auto p = probe("cudaMemcpy");
  ProcessCalls::Options o;
  o.max_processes = 2;
  ProcessCalls calls(o);
  for (std::uint32_t pid = 1; pid <= 4; ++pid) calls.add(call(p, pid, 5));
  auto v = calls.view();
  EXPECT_EQ(v->processes.size(), 2u);
  EXPECT_EQ(v->overflow_events, 2u);
}

TEST(ProcessCalls, ExitsAreMarkedThenLetGo) {
  auto p = probe("cudaMemcpy");
  ProcessCalls calls;
  calls.add(call(p, 7, 5));
  calls.add(call(p, 8, 5));
  const auto t0 = std::chrono::steady_clock::now();
  auto alive = [](std::uint32_t pid) { return pid == 8; };
  calls.sweep(t0, alive, 10);
  auto v = calls.view();
  EXPECT_TRUE(v->processes.at(7).exited);
  EXPECT_FALSE(v->processes.at(8).exited);
  calls.sweep(t0 + ProcessCalls::kKeepExited - std::chrono::seconds(1), alive, 10);
  EXPECT_EQ(calls.process_count(), 2u);
  calls.sweep(t0 + ProcessCalls::kKeepExited, alive, 10);
  EXPECT_EQ(calls.process_count(), 1u);
  // A call after the mark (the pid came back): alive again.
  calls.add(call(p, 8, 5));
  EXPECT_FALSE(calls.view()->processes.at(8).exited);
}

// Churn at the cap: a new process takes the place of the one gone the longest, once gone
// for kMinKeepExited; the table never passes its cap and a later process is still tracked.
TEST(ProcessCalls, ChurnAtTheCapLetsTheOldestExitedGo) {
  auto p = probe("cudaMalloc");
  ProcessCalls::Options o;
  o.max_processes = 4;
  ProcessCalls calls(o);
  auto alive = [](std::uint32_t pid) { return pid == 1; };
  auto t = std::chrono::steady_clock::time_point{};
  calls.add(call(p, 1, 5));  // lives throughout
  for (std::uint32_t pid = 100; pid < 2100; ++pid) {
    calls.add(call(p, pid, 5));
    calls.sweep(t, alive, 8);  // finds it gone
    t += ProcessCalls::kMinKeepExited / 2;
    ASSERT_LE(calls.process_count(), 4u);
  }
  auto v = calls.view();
  EXPECT_EQ(v->overflow_events, 0u) << "every process was tracked";
  EXPECT_EQ(calls.evicted(), 2000u - 3u);
  EXPECT_TRUE(v->processes.count(1));
  EXPECT_TRUE(v->processes.count(2099));
  EXPECT_FALSE(v->processes.at(1).exited);
}

// Processes gone for less than kMinKeepExited keep their place: the newcomer is counted only.
TEST(ProcessCalls, RecentExitsKeepTheirPlace) {
  auto p = probe("cudaMalloc");
  ProcessCalls::Options o;
  o.max_processes = 2;
  ProcessCalls calls(o);
  auto none = [](std::uint32_t) { return false; };
  const auto t0 = std::chrono::steady_clock::time_point{};
  calls.add(call(p, 1, 5));
  calls.add(call(p, 2, 5));
  calls.sweep(t0, none, 8);
  calls.sweep(t0 + ProcessCalls::kMinKeepExited - std::chrono::seconds(1), none, 8);
  calls.add(call(p, 3, 5));
  EXPECT_EQ(calls.view()->overflow_events, 1u);
  calls.sweep(t0 + ProcessCalls::kMinKeepExited, none, 8);
  calls.add(call(p, 4, 5));
  EXPECT_EQ(calls.view()->overflow_events, 1u);
  EXPECT_EQ(calls.evicted(), 1u);
  EXPECT_TRUE(calls.view()->processes.count(4));
}

// Finding a process gone copies nothing: the view marks it and shares what it published.
TEST(ProcessCalls, AnExitSharesThePublishedSummary) {
  auto p = probe("cudaMalloc");
  ProcessCalls calls;
  calls.add(call(p, 7, 5));
  calls.add(call(p, 8, 5));
  auto before = calls.view();
  calls.sweep(
      std::chrono::steady_clock::time_point{}, [](std::uint32_t pid) { return pid == 8; }, 10);
  auto after = calls.view();
  EXPECT_TRUE(after->processes.at(7).exited);
  EXPECT_EQ(after->processes.at(7).calls, before->processes.at(7).calls);
  EXPECT_EQ(after->processes.at(8).calls, before->processes.at(8).calls);
}

// Once a gone process's last calls are published, that copy is all the table keeps of
// it; a late call (its counts drained after the exit was found) goes on from the copy.
TEST(ProcessCalls, AGoneProcessKeepsOnlyItsPublishedSummary) {
  auto p = probe("cudaMalloc");
  ProcessCalls calls;
  for (std::uint64_t d = 1'000; d < 4'000'000; d = d * 3 / 2) calls.add(call(p, 7, d));
  calls.add(call(p, 8, 5));
  const auto running = calls.view();
  auto gone = [](std::uint32_t pid) { return pid == 8; };
  calls.sweep(std::chrono::steady_clock::time_point{}, gone, 10);
  EXPECT_EQ(calls.live_count(), 2u);
  const auto both = calls.view();  // 7's last calls were published: only that copy is kept
  EXPECT_EQ(calls.live_count(), 1u);
  EXPECT_EQ(both->processes.at(7).calls, running->processes.at(7).calls);
  // What went is the live summary, larger than its frozen copy (the window's slack).
  EXPECT_GT(running->bytes - both->bytes, both->processes.at(7).calls->heap_bytes());

  calls.add(call(p, 7, 5));
  EXPECT_EQ(calls.live_count(), 2u);
  const auto back = calls.view();
  EXPECT_FALSE(back->processes.at(7).exited);
  EXPECT_EQ(back->processes.at(7).calls->rows().front().calls,
            both->processes.at(7).calls->rows().front().calls + 1);
}

// Churn at the cap: the table's bytes are its cap's worth of published summaries (one
// copy each) and the live processes' own; they do not grow with the processes churned.
TEST(ProcessCalls, BytesUnderChurnStayWithinTheCap) {
  auto p = probe("cudaMalloc");
  ProcessCalls::Options o;
  o.max_processes = 8;
  ProcessCalls calls(o);
  auto alive = [](std::uint32_t pid) { return pid == 1; };
  auto t = std::chrono::steady_clock::time_point{};
  calls.add(call(p, 1, 5));
  std::size_t at_the_cap = 0;
  std::size_t most = 0;
  for (std::uint32_t pid = 100; pid < 1100; ++pid) {
    for (std::uint64_t d = 1'000; d < 4'000'000; d = d * 3 / 2) calls.add(call(p, pid, d));
    calls.sweep(t, alive, 16);
    t += ProcessCalls::kMinKeepExited / 2;
    const auto v = calls.view();
    if (pid == 120) at_the_cap = v->bytes;
    if (pid > 120) most = std::max(most, v->bytes);
  }
  EXPECT_EQ(calls.live_count(), 1u) << "only pid 1 lives";
  EXPECT_EQ(most, at_the_cap) << "the same processes' worth of bytes once the table is full";
  const auto v = calls.view();
  std::size_t published = 0;
  for (const auto& [pid, proc] : v->processes) published += proc.calls->heap_bytes();
  EXPECT_LT(v->bytes, 2 * published) << "one copy of each gone process, not two";
}

}  // namespace
}  // namespace eacgm::analysis
