// HangDiagnosis over recorded NCCL streams: a rank that stops calling while the others
// enter the next instance is named as never entered, the ranks in it as waiting, and the
// hang is over when it arrives; a rank that is only late, a wait nobody is blocked in, a
// job that is gone and a communicator spanning nodes are not hangs; the age rule.
#include "analysis/hang_diagnosis.h"

#include <gtest/gtest.h>

#include <vector>

#include "../common/cuda_probe.h"
#include "analysis/live_analysis.h"
#include "nccl_events.h"

namespace eacgm::analysis {
namespace {

using testing::nccl_call;
using testing::nccl_probe;

constexpr std::uint64_t kSecond = 1'000'000'000;
constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000;
constexpr std::uint64_t kMinAge = 5 * kSecond;

// The recorded stream: `count` all-reduces of `nranks` ranks, instance k at kT0 + k x 10 ms.
void record(NcclSkew& skew, const std::shared_ptr<const ProbeInfo>& p, int nranks, int from, int to,
            const std::vector<int>& ranks, std::uint64_t comm_id = 0xc0, int comm_nranks = -1) {
  for (int k = from; k < to; ++k) {
    for (int r : ranks) {
      skew.add(nccl_call(p, {.comm_id = comm_id,
                             .rank = r,
                             .nranks = comm_nranks > 0 ? comm_nranks : nranks,
                             .ts_ns = kT0 + static_cast<std::uint64_t>(k) * 10 * kMs}));
    }
  }
}

// A scan at `now` whose listed calls are `rows` (already past the minimum age).
InflightSummary scan(std::vector<InflightRow> rows) {
  InflightSummary s;
  s.min_age_ns = kMinAge;
  s.rows = std::move(rows);
  return s;
}

InflightRow waiting(std::uint32_t pid, std::uint64_t entry_ns, std::uint64_t now, const char* function) {
  InflightRow r;
  r.call.call.probe = test::cuda_probe(function);
  r.call.call.pid = pid;
  r.call.call.tid = pid + 1;
  r.call.call.ts_ns = entry_ns;
  r.call.entry_mono_ns = entry_ns;
  r.age_ns = now - entry_ns;
  return r;
}

const auto kAllAlive = [](std::uint32_t) { return true; };

TEST(HangDiagnosis, ARankThatStopsCallingIsNamedAsNeverEnteredAndTheHangEndsWhenItArrives) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  // 8 ranks (pids 1000..1007) run 100 instances together; then rank 5 stops calling
  // while the others enter instance 101 (and rank 0 already the next one).
  record(skew, allreduce, 8, 0, 100, {0, 1, 2, 3, 4, 5, 6, 7});
  record(skew, allreduce, 8, 100, 101, {0, 1, 2, 3, 4, 6, 7});
  record(skew, allreduce, 8, 101, 102, {0});
  const std::uint64_t entered = kT0 + 100 * 10 * kMs;
  const std::uint64_t now = entered + 94 * kSecond;
  // The ranks that entered wait in a synchronisation (NCCL's host call returned at once).
  std::vector<InflightRow> rows;
  for (std::uint32_t pid : {1000u, 1001u, 1002u, 1003u, 1004u, 1006u, 1007u}) {
    rows.push_back(waiting(pid, entered + kMs, now, "cudaStreamSynchronize"));
  }
  HangDiagnosis hangs;
  hangs.update(skew.progress(), scan(rows), now, kAllAlive);
  const HangSummary& s = hangs.summary();
  ASSERT_EQ(s.communicators.size(), 1u);
  const CommDiagnosis& d = s.communicators[0];
  EXPECT_EQ(d.comm_id, 0xc0u);
  EXPECT_EQ(d.function, "ncclAllReduce");
  EXPECT_EQ(d.number, 101u);
  EXPECT_EQ(d.age_ns, 94 * kSecond);
  ASSERT_EQ(d.missing.size(), 1u);
  EXPECT_EQ(d.missing[0].rank, 5);
  EXPECT_EQ(d.missing[0].pid, 1005u);
  EXPECT_EQ(d.missing[0].last_entered, "ncclAllReduce");
  EXPECT_EQ(d.missing[0].last_number, 100u);
  EXPECT_EQ(d.missing[0].in_call, "");
  ASSERT_EQ(d.in.size(), 7u);
  EXPECT_EQ(d.in[0].in_call, "cudaStreamSynchronize");
  EXPECT_TRUE(d.hang);
  EXPECT_EQ(d.verdict,
            "rank 5 (pid 1005) never entered ncclAllReduce #101; ranks 0-4,6,7 waiting in it for 94 s");
  ASSERT_EQ(s.current.size(), 1u);
  EXPECT_EQ(s.current[0].rule, "communicator");
  EXPECT_EQ(s.current[0].rank, 5);
  EXPECT_EQ(s.current[0].pid, 1005u);
  EXPECT_EQ(s.current[0].start_ns, entered);
  EXPECT_EQ(s.current[0].end_ns, 0u);
  EXPECT_EQ(s.total, 1u);

  // The next scan finds it still: one hang, the same start, older.
  hangs.update(skew.progress(), scan(rows), now + kSecond, kAllAlive);
  ASSERT_EQ(hangs.summary().current.size(), 1u);
  EXPECT_EQ(hangs.summary().current[0].start_ns, entered);
  EXPECT_EQ(hangs.summary().current[0].age_ns, 95 * kSecond);
  EXPECT_EQ(hangs.summary().total, 1u);

  // Rank 5 arrives (and the others go on to the next): the hang is over.
  record(skew, allreduce, 8, 100, 101, {5});
  record(skew, allreduce, 8, 101, 102, {1, 2, 3, 4, 5, 6, 7});
  hangs.update(skew.progress(), scan({}), now + 2 * kSecond, kAllAlive);
  EXPECT_TRUE(hangs.summary().current.empty());
  EXPECT_TRUE(hangs.summary().communicators.empty());
  ASSERT_EQ(hangs.summary().ended.size(), 1u);
  EXPECT_EQ(hangs.summary().ended[0].end_ns, now + 2 * kSecond);
  EXPECT_EQ(hangs.summary().ended[0].age_ns, 96 * kSecond);
  EXPECT_EQ(hangs.summary().total, 1u);
}

TEST(HangDiagnosis, ARankInsideTheCollectiveCallCountsAsEnteredAndItsNumberIsItsNext) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  record(skew, allreduce, 2, 0, 10, {0, 1});
  const std::uint64_t entered = kT0 + 10 * 10 * kMs;
  const std::uint64_t now = entered + 7 * kSecond;
  // Rank 0 is blocked inside its 11th all-reduce (no record yet); rank 1 is elsewhere.
  InflightRow in_call = waiting(1000, entered, now, "ncclAllReduce");
  in_call.call.call.probe = allreduce;
  in_call.call.call.nccl_comm_id = 0xc0;
  in_call.call.call.nccl_rank = 0;
  in_call.call.call.nccl_nranks = 2;
  HangDiagnosis hangs;
  hangs.update(skew.progress(), scan({in_call}), now, kAllAlive);
  ASSERT_EQ(hangs.summary().communicators.size(), 1u);
  EXPECT_EQ(hangs.summary().communicators[0].verdict,
            "rank 1 (pid 1001) never entered ncclAllReduce #11; rank 0 waiting in it for 7 s");
  EXPECT_EQ(hangs.summary().current.size(), 1u);
}

TEST(HangDiagnosis, LongButLegitimateWaitsAreNotHangs) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  record(skew, allreduce, 2, 0, 10, {0, 1});
  record(skew, allreduce, 2, 10, 11, {0});
  const std::uint64_t entered = kT0 + 10 * 10 * kMs;
  HangDiagnosis hangs;
  // Younger than the minimum age: nothing to say.
  hangs.update(skew.progress(), scan({}), entered + 4 * kSecond, kAllAlive);
  EXPECT_TRUE(hangs.summary().communicators.empty());
  // Older, but rank 0 is blocked in nothing (it computes on): a wait with its age.
  hangs.update(skew.progress(), scan({}), entered + 30 * kSecond, kAllAlive);
  ASSERT_EQ(hangs.summary().communicators.size(), 1u);
  EXPECT_FALSE(hangs.summary().communicators[0].hang);
  EXPECT_EQ(hangs.summary().communicators[0].verdict,
            "rank 1 (pid 1001) not in ncclAllReduce #11 yet; rank 0 entered it 30 s ago");
  EXPECT_TRUE(hangs.summary().current.empty());
  // Past hang_after_s it is a hang whatever rank 0 does.
  hangs.set_hang_after_ns(60 * kSecond);
  hangs.update(skew.progress(), scan({}), entered + 61 * kSecond, kAllAlive);
  EXPECT_TRUE(hangs.summary().communicators[0].hang);
  EXPECT_EQ(hangs.summary().current.size(), 1u);
  // The job is gone (every rank's process exited): no diagnosis, the hang is over.
  hangs.update(skew.progress(), scan({}), entered + 62 * kSecond, [](std::uint32_t) { return false; });
  EXPECT_TRUE(hangs.summary().communicators.empty());
  EXPECT_TRUE(hangs.summary().current.empty());
  EXPECT_EQ(hangs.summary().ended.size(), 1u);
}

TEST(HangDiagnosis, AMissingRankThatExitedIsSaidSo) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  record(skew, allreduce, 2, 0, 10, {0, 1});
  record(skew, allreduce, 2, 10, 11, {0});
  const std::uint64_t entered = kT0 + 10 * 10 * kMs;
  const std::uint64_t now = entered + 20 * kSecond;
  HangDiagnosis hangs;
  hangs.update(skew.progress(), scan({waiting(1000, entered, now, "cudaStreamSynchronize")}), now,
               [](std::uint32_t pid) { return pid != 1001; });
  ASSERT_EQ(hangs.summary().communicators.size(), 1u);
  EXPECT_EQ(hangs.summary().communicators[0].verdict,
            "rank 1 (pid 1001, exited) never entered ncclAllReduce #11; rank 0 waiting in it for 20 s");
}

TEST(HangDiagnosis, ACommunicatorSpanningNodesNamesTheRanksNotSeenHere) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  // Ranks 0-3 of 8 here; rank 2 stops.
  record(skew, allreduce, 4, 0, 200, {0, 1, 2, 3}, 0xc0, 8);
  record(skew, allreduce, 4, 200, 201, {0, 1, 3}, 0xc0, 8);
  const std::uint64_t entered = kT0 + 200 * 10 * kMs;
  const std::uint64_t now = entered + 10 * kSecond;
  HangDiagnosis hangs;
  hangs.update(skew.progress(), scan({waiting(1001, entered, now, "cudaStreamSynchronize")}), now, kAllAlive);
  ASSERT_EQ(hangs.summary().communicators.size(), 1u);
  EXPECT_EQ(hangs.summary().communicators[0].verdict,
            "rank 2 (pid 1002) never entered ncclAllReduce #201; ranks 0,1,3 waiting in it for 10 s; "
            "ranks 4-7 not seen on this node");
}

TEST(HangDiagnosis, TheAgeRuleSaysAHangForAnyCallInFlightTooLong) {
  NcclSkew skew;
  HangDiagnosis hangs;
  hangs.set_hang_after_ns(600 * kSecond);
  const std::uint64_t now = kT0 + 1000 * kSecond;
  InflightRow stuck = waiting(77, now - 601 * kSecond, now, "cudaDeviceSynchronize");
  stuck.call.call.comm = {'t', 'r', 'a', 'i', 'n'};
  const InflightRow young = waiting(88, now - 100 * kSecond, now, "cudaDeviceSynchronize");
  hangs.update(skew.progress(), scan({stuck, young}), now, kAllAlive);
  ASSERT_EQ(hangs.summary().current.size(), 1u);
  EXPECT_EQ(hangs.summary().current[0].rule, "age");
  EXPECT_EQ(hangs.summary().current[0].pid, 77u);
  EXPECT_EQ(hangs.summary().current[0].verdict,
            "pid 77 tid 78 (train) stuck in cudaDeviceSynchronize for 601 s");
  // Off: never.
  hangs.set_hang_after_ns(0);
  hangs.update(skew.progress(), scan({stuck, young}), now + kSecond, kAllAlive);
  EXPECT_TRUE(hangs.summary().current.empty());
  EXPECT_EQ(hangs.summary().ended.size(), 1u);
}

TEST(HangDiagnosis, TheWaitingThreadsCarryTheirPythonStacks) {
  auto allreduce = nccl_probe("ncclAllReduce");
  auto stack_of = [](std::uint32_t pid, const char* function) {
    auto s = std::make_shared<PythonStack>();
    s->pid = pid;
    s->frames = {
        {std::make_shared<const PythonCode>(PythonCode{"[cuda] cudaStreamSynchronize", "", 0, true}), 0},
        {std::make_shared<const PythonCode>(PythonCode{function, "/app/train.py", 30}), 41}};
    return std::shared_ptr<const PythonStack>(std::move(s));
  };
  // Two ranks: rank 1 never enters the 11th all-reduce; rank 0 waits in a synchronisation,
  // its stack read; a process outside the communicator is stuck too, without a stack.
  NcclSkew skew;
  record(skew, allreduce, 2, 0, 10, {0, 1});
  record(skew, allreduce, 2, 10, 11, {0});
  const std::uint64_t entered = kT0 + 100 * kMs;
  const std::uint64_t now = entered + 700 * kSecond;
  InflightRow rank0 = waiting(1000, entered + kMs, now, "cudaStreamSynchronize");
  rank0.call.python_stack = stack_of(1000, "sync_gradients");
  InflightRow other = waiting(77, now - 650 * kSecond, now, "cudaDeviceSynchronize");
  InflightRow other_py = waiting(88, now - 640 * kSecond, now, "cudaDeviceSynchronize");
  other_py.call.python_stack = stack_of(88, "save_checkpoint");
  HangDiagnosis hangs;
  hangs.update(skew.progress(), scan({rank0, other, other_py}), now, kAllAlive);
  const HangSummary& s = hangs.summary();
  ASSERT_EQ(s.communicators.size(), 1u);
  ASSERT_EQ(s.communicators[0].in.size(), 1u);
  const HangRank& in = s.communicators[0].in[0];
  EXPECT_EQ(in.in_call_tid, 1001u);
  EXPECT_EQ(in.python_stack, rank0.call.python_stack);
  ASSERT_EQ(s.communicators[0].missing.size(), 1u);
  EXPECT_EQ(s.communicators[0].missing[0].python_stack, nullptr) << "rank 1 is in no call";
  ASSERT_EQ(s.current.size(), 3u);
  for (const Hang& h : s.current) {
    if (h.rule == "communicator") {
      ASSERT_EQ(h.stacks.size(), 1u);
      EXPECT_EQ(h.stacks[0].rank, 0);
      EXPECT_EQ(h.stacks[0].pid, 1000u);
      EXPECT_EQ(h.stacks[0].python_stack->frames[1].code->function, "sync_gradients");
    } else if (h.pid == 88) {
      ASSERT_EQ(h.stacks.size(), 1u);
      EXPECT_EQ(h.stacks[0].in_call_tid, 89u);
      EXPECT_EQ(h.stacks[0].in_call, "cudaDeviceSynchronize");
      EXPECT_EQ(h.stacks[0].in_call_ns, 640 * kSecond);
      EXPECT_EQ(h.stacks[0].python_stack, other_py.call.python_stack);
    } else {
      EXPECT_EQ(h.pid, 77u);
      EXPECT_TRUE(h.stacks.empty()) << "no stack read: none carried";
    }
  }
}

TEST(HangDiagnosis, RankLists) {
  EXPECT_EQ(rank_list(std::vector<std::int32_t>{0, 1, 2, 3, 4, 6, 7}), "0-4,6,7");
  EXPECT_EQ(rank_list(std::vector<std::int32_t>{5}), "5");
  EXPECT_EQ(rank_list(std::vector<std::int32_t>{9, 1, 3, 2}), "1-3,9");
  EXPECT_EQ(rank_list(std::vector<std::int32_t>{}), "");
}

// Through LiveAnalysis: the calls stream in, the scan of the calls in flight diagnoses.
TEST(HangDiagnosis, LiveAnalysisDiagnosesAtEachScanOfTheCallsInFlight) {
  auto allreduce = nccl_probe("ncclAllReduce");
  LiveAnalysis live;
  const std::uint64_t entered = kT0 + 3 * 10 * kMs;
  const std::uint64_t now = entered + 9 * kSecond;
  LiveAnalysis::Clocks clocks;
  clocks.wall = [now] { return std::chrono::system_clock::time_point(std::chrono::nanoseconds(now)); };
  live.set_clocks(clocks);
  live.set_process_alive([](std::uint32_t) { return true; });
  live.set_thread_alive([](std::uint32_t, std::uint32_t) { return true; });
  std::vector<CallEvent> calls;
  for (int k = 0; k < 4; ++k) {
    for (int r = 0; r < 2; ++r) {
      if (k == 3 && r == 1) continue;  // rank 1 never enters the 4th
      calls.push_back(
          nccl_call(allreduce, {.rank = r, .ts_ns = kT0 + static_cast<std::uint64_t>(k) * 10 * kMs}));
    }
  }
  live.on_calls(calls);
  InflightCall sync;
  sync.call.probe = test::cuda_probe("cudaStreamSynchronize");
  sync.call.pid = 1000;
  sync.call.tid = 1000;
  sync.call.ts_ns = entered;
  sync.entry_mono_ns = 100 * kSecond;
  live.on_inflight(std::vector{sync}, 100 * kSecond + 9 * kSecond);
  live.on_tick(std::chrono::steady_clock::now(), {});
  auto snap = live.snapshot();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->get<analysis::HangSummary>().current.size(), 1u);
  EXPECT_EQ(snap->get<analysis::HangSummary>().current[0].verdict,
            "rank 1 (pid 1001) never entered ncclAllReduce #4; rank 0 waiting in it for 9 s");
}

}  // namespace
}  // namespace eacgm::analysis
