// HostWaits: per-(process, kind) waits from traced calls (per call and always-on) and
// from the host-wait tracer; totals, estimates from sampled calls, the share of the
// process's wall time, exits turned into summaries, and the caps.
#include "analysis/host_waits.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "../common/cuda_probe.h"
#include "../common/host_wait_timings.h"
#include "analysis/live_analysis.h"

namespace eacgm::analysis {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

using test::cuda_probe;

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, std::uint64_t dur_ns) {
  CallEvent e;
  e.probe = p;
  e.pid = pid;
  e.tid = pid;
  e.has_exit = true;
  e.dur_ns = dur_ns;
  std::snprintf(e.comm.data(), e.comm.size(), "trainer");
  return e;
}

const HostWaitRow* row(const HostWaitSummary& s, std::uint32_t pid, HostWaitKind kind) {
  for (const auto& r : s.rows) {
    if (r.pid == pid && r.kind == kind) return &r;
  }
  return nullptr;
}

struct HostWaitsTest : ::testing::Test {
  HostWaitsTest() : waits(HostWaits::Options{}, start) {
    waits.set_start_of([](std::uint32_t) { return std::nullopt; });
  }
  Clock::time_point start = Clock::now();
  HostWaits waits;
};

TEST_F(HostWaitsTest, PerCallSyncsAreWaitsOfTheirKindAndOtherCallsAreNot) {
  auto sync = cuda_probe("cudaStreamSynchronize");
  auto copy = cuda_probe("cuMemcpyDtoH_v2");
  auto launch = cuda_probe("cudaLaunchKernel");
  waits.add(call(sync, 7, 2'000'000));
  waits.add(call(sync, 7, 4'000'000));
  waits.add(call(copy, 7, 1'000'000));
  waits.add(call(launch, 7, 5'000));
  // The driver's sync under the runtime's is the same wait.
  CallEvent nested = call(cuda_probe("cuStreamSynchronize"), 7, 3'900'000);
  nested.nested = true;
  waits.add(nested);

  auto s = waits.summary(start + seconds(1));
  ASSERT_EQ(s.rows.size(), 2u);
  const HostWaitRow* r = row(s, 7, HostWaitKind::kStreamSync);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->comm, "trainer");
  EXPECT_EQ(r->calls, 2u);
  EXPECT_EQ(r->timed, 2u);
  EXPECT_EQ(r->total_ns, 6'000'000u);
  EXPECT_FALSE(r->estimated);
  EXPECT_NEAR(r->p50_ns, 2e6, 2e6 * 0.01);
  EXPECT_NEAR(r->p99_ns, 4e6, 4e6 * 0.01);
  EXPECT_EQ(r->max_ns, 4'000'000u);
  EXPECT_DOUBLE_EQ(r->wall_ns, 1e9) << "no process start known: from the trace's start";
  EXPECT_NEAR(r->share, 0.006, 1e-9);
  EXPECT_FALSE(r->exited);
  const HostWaitRow* c = row(s, 7, HostWaitKind::kBlockingCopy);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->total_ns, 1'000'000u);
  EXPECT_EQ(s.calls_by_kind[static_cast<std::size_t>(HostWaitKind::kStreamSync)], 2u);
  EXPECT_EQ(s.by_kind[static_cast<std::size_t>(HostWaitKind::kStreamSync)].count(), 2u);
}

TEST_F(HostWaitsTest, AlwaysOnCountsArePricedAtEachDeliverysSampledMean) {
  auto sync = cuda_probe("cuCtxSynchronize");
  // First delivery: 16 calls, one sampled at 10 ms; second: 16 calls, one at 30 ms.
  std::vector<CallCount> counts = {CallCount{9, sync, 0, 0, "", 16, 0}};
  std::vector<CallTimings> timings = {CallTimings{9, sync, eacgm_hist_key(10'000'000), 1, 10'000'000, 0}};
  waits.add(counts, timings);
  timings = {CallTimings{9, sync, eacgm_hist_key(30'000'000), 1, 30'000'000, 0}};
  waits.add(counts, timings);
  auto s = waits.summary(start + seconds(2));
  const HostWaitRow* r = row(s, 9, HostWaitKind::kDeviceSync);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->calls, 32u);
  EXPECT_EQ(r->timed, 2u);
  EXPECT_TRUE(r->estimated);
  EXPECT_EQ(r->total_ns, 16u * 10'000'000 + 16u * 30'000'000);
}

TEST_F(HostWaitsTest, AlwaysOnWithEveryCallTimedIsExact) {
  auto sync = cuda_probe("cudaEventSynchronize");
  std::vector<CallCount> counts = {CallCount{9, sync, 0, 0, "", 2, 0}};
  std::vector<CallTimings> timings = {CallTimings{9, sync, eacgm_hist_key(1'000'000), 1, 1'000'000, 0},
                                      CallTimings{9, sync, eacgm_hist_key(3'000'000), 1, 3'000'000, 0}};
  waits.add(counts, timings);
  const auto summary = waits.summary(start + seconds(1));  // the row points into it
  const HostWaitRow* r = row(summary, 9, HostWaitKind::kEventSync);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->calls, 2u);
  EXPECT_EQ(r->timed, 2u);
  EXPECT_FALSE(r->estimated);
  EXPECT_EQ(r->total_ns, 4'000'000u);
}

TEST_F(HostWaitsTest, CallsCountedBeforeAnySampleArePricedOnceOneArrives) {
  auto sync = cuda_probe("cuStreamSynchronize_ptsz");
  std::vector<CallCount> counts = {CallCount{9, sync, 0, 0, "", 3, 0}};
  waits.add(counts, {});
  EXPECT_EQ(row(waits.summary(start + seconds(1)), 9, HostWaitKind::kStreamSync)->total_ns, 0u);
  std::vector<CallCount> one = {CallCount{9, sync, 0, 0, "", 1, 0}};
  std::vector<CallTimings> timed = {CallTimings{9, sync, eacgm_hist_key(2'000'000), 1, 2'000'000, 0}};
  waits.add(one, timed);
  const auto summary = waits.summary(start + seconds(1));  // the row points into it
  const HostWaitRow* r = row(summary, 9, HostWaitKind::kStreamSync);
  EXPECT_EQ(r->calls, 4u);
  EXPECT_EQ(r->total_ns, 8'000'000u) << "every call priced, none twice";
}

// A private-driver process's driver waits come from its hook (every one timed); where the
// runtime's probes report waits of the same kind (per call, they still reach it), those are
// the same waits a layer up: the kind's first source is kept and the other left out.
TEST_F(HostWaitsTest, AHooksDriverWaitsCountWhereNoProbeReportsTheirKind) {
  auto hooked = [](const char* function) {
    auto p = std::make_shared<ProbeInfo>(*cuda_probe(function));
    p->spec.domain = "cuda_driver";
    p->counted = true;
    p->hook = true;
    return std::shared_ptr<const ProbeInfo>(p);
  };
  auto stream_sync = hooked("cuStreamSynchronize");
  auto ctx_sync = hooked("cuCtxSynchronize");
  // 7: the runtime's probe reports its stream syncs; its hook times the driver's.
  waits.add(call(cuda_probe("cudaStreamSynchronize"), 7, 2'000'000));
  std::vector<CallCount> counts = {CallCount{7, stream_sync, 0, 0, "", 1, 0},
                                   CallCount{8, ctx_sync, 0, 0, "", 2, 0},
                                   CallCount{9, stream_sync, 0, 0, "", 1, 0}};
  std::vector<CallTimings> timings = {
      CallTimings{7, stream_sync, eacgm_hist_key(1'900'000), 1, 1'900'000, 0},
      CallTimings{8, ctx_sync, eacgm_hist_key(1'000'000), 2, 2'000'000, 0},
      CallTimings{9, stream_sync, eacgm_hist_key(3'000'000), 1, 3'000'000, 0}};
  waits.add(counts, timings);
  // 9: its hook reported first; a probe's later wait of the kind is the same wait.
  waits.add(call(cuda_probe("cudaStreamSynchronize"), 9, 3'100'000));

  const auto summary = waits.summary(start + seconds(1));  // the rows point into it
  const HostWaitRow* seven = row(summary, 7, HostWaitKind::kStreamSync);
  ASSERT_NE(seven, nullptr);
  EXPECT_EQ(seven->calls, 1u) << "the probe's, not twice";
  EXPECT_EQ(seven->total_ns, 2'000'000u);
  const HostWaitRow* eight = row(summary, 8, HostWaitKind::kDeviceSync);
  ASSERT_NE(eight, nullptr) << "only the hook sees them";
  EXPECT_EQ(eight->calls, 2u);
  EXPECT_EQ(eight->timed, 2u);
  EXPECT_EQ(eight->total_ns, 2'000'000u);
  const HostWaitRow* nine = row(summary, 9, HostWaitKind::kStreamSync);
  ASSERT_NE(nine, nullptr);
  EXPECT_EQ(nine->calls, 1u);
  EXPECT_EQ(nine->total_ns, 3'000'000u);
  EXPECT_EQ(summary.calls_by_kind[static_cast<std::size_t>(HostWaitKind::kStreamSync)], 2u);
}

TEST_F(HostWaitsTest, SyscallWaitsAreTimedWholeAndShareTheProcessWallTime) {
  waits.set_start_of([&](std::uint32_t) { return std::optional(start + milliseconds(500)); });
  waits.add(HostWaitProcess{11, "loader", 0, 0});
  waits.add(test::syscall_waits(11, HostWaitKind::kFutex, 100'000'000, 3));
  waits.add(test::syscall_waits(11, HostWaitKind::kInputWait, 50'000'000, 2));
  auto s = waits.summary(start + milliseconds(1500));
  const HostWaitRow* f = row(s, 11, HostWaitKind::kFutex);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->comm, "loader");
  EXPECT_EQ(f->calls, 3u);
  EXPECT_EQ(f->timed, 3u);
  EXPECT_EQ(f->total_ns, 300'000'000u);
  EXPECT_DOUBLE_EQ(f->wall_ns, 1e9) << "from the process's start, later than the trace's";
  EXPECT_NEAR(f->share, 0.3, 1e-9);
  EXPECT_NEAR(f->p50_ns, 1e8, 1e8 * 0.01);
  const HostWaitRow* i = row(s, 11, HostWaitKind::kInputWait);
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->total_ns, 100'000'000u);
}

std::uint64_t ns(Clock::time_point t) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

TEST_F(HostWaitsTest, TheKernelsStartExitAndNameOfAProcessComeFirst) {
  waits.set_start_of([&](std::uint32_t) { return std::optional(start + seconds(5)); });
  CallEvent e = call(cuda_probe("cuCtxSynchronize"), 11, 100'000'000);
  waits.add(e);
  waits.add(HostWaitProcess{11, "python3", ns(start + milliseconds(200)), 0});
  waits.add(test::syscall_waits(11, HostWaitKind::kFutex, 100'000'000, 1));
  auto s = waits.summary(start + milliseconds(1200));
  EXPECT_EQ(s.rows[0].comm, "python3") << "the main thread's name, not the calling thread's";
  EXPECT_DOUBLE_EQ(s.rows[0].wall_ns, 1e9) << "from the kernel's start, not /proc's";
  // Its exit as the kernel saw it ends its wall time, however late the sweep finds it.
  waits.add(HostWaitProcess{11, "python3", ns(start + milliseconds(200)), ns(start + milliseconds(700))});
  EXPECT_DOUBLE_EQ(waits.summary(start + seconds(3)).rows[0].wall_ns, 5e8);
  waits.sweep(start + seconds(3), [](std::uint32_t) { return false; }, 10, {});
  s = waits.summary(start + seconds(9));
  EXPECT_TRUE(s.rows[0].exited);
  EXPECT_DOUBLE_EQ(s.rows[0].wall_ns, 5e8);
  EXPECT_NEAR(s.rows[0].share, 0.2, 1e-9);
}

TEST_F(HostWaitsTest, AProcessStartedBeforeTheTraceCountsFromTheTrace) {
  waits.set_start_of([&](std::uint32_t) { return std::optional(start - seconds(100)); });
  waits.add(test::syscall_waits(11, HostWaitKind::kFutex, 100'000'000, 1));
  EXPECT_DOUBLE_EQ(row(waits.summary(start + seconds(2)), 11, HostWaitKind::kFutex)->wall_ns, 2e9);
}

TEST_F(HostWaitsTest, ManyThreadsWaitingCanPassAllTheWallTime) {
  waits.add(test::syscall_waits(11, HostWaitKind::kFutex, 1'000'000'000, 8));
  EXPECT_NEAR(row(waits.summary(start + seconds(2)), 11, HostWaitKind::kFutex)->share, 4.0, 1e-9);
}

TEST_F(HostWaitsTest, AnExitedProcessBecomesASummaryAfterTheGrace) {
  bool alive = true;
  auto is_alive = [&](std::uint32_t) { return alive; };
  waits.add(test::syscall_waits(11, HostWaitKind::kFutex, 100'000'000, 2));
  waits.sweep(start + seconds(1), is_alive, 100, seconds(2));
  EXPECT_EQ(waits.process_count(), 1u);
  alive = false;
  waits.sweep(start + seconds(2), is_alive, 100, seconds(2));
  EXPECT_EQ(waits.process_count(), 1u) << "within the grace: its last waits may still come";
  waits.add(test::syscall_waits(11, HostWaitKind::kFutex, 100'000'000, 1));
  waits.sweep(start + seconds(4), is_alive, 100, seconds(2));
  EXPECT_EQ(waits.process_count(), 0u);
  auto s = waits.summary(start + seconds(10));
  const HostWaitRow* r = row(s, 11, HostWaitKind::kFutex);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->calls, 3u);
  EXPECT_EQ(r->total_ns, 300'000'000u);
  EXPECT_DOUBLE_EQ(r->wall_ns, 2e9) << "ends when it was first found gone";
  EXPECT_NEAR(r->p50_ns, 1e8, 1e6);
  EXPECT_EQ(s.by_kind[static_cast<std::size_t>(HostWaitKind::kFutex)].count(), 3u) << "kept per kind";
}

TEST_F(HostWaitsTest, AtTheEndAGoneProcessIsSummarizedAtOnce) {
  waits.add(test::syscall_waits(11, HostWaitKind::kInputWait, 1'000'000, 1));
  waits.sweep(start + seconds(1), [](std::uint32_t) { return false; }, waits.process_count(), {});
  EXPECT_EQ(waits.process_count(), 0u);
  EXPECT_TRUE(row(waits.summary(start + seconds(1)), 11, HostWaitKind::kInputWait)->exited);
}

TEST(HostWaits, ProcessesPastTheCapAreCountedAndTheOldestSummariesGo) {
  const auto start = Clock::now();
  HostWaits waits(HostWaits::Options{2, 1}, start);
  waits.set_start_of([](std::uint32_t) { return std::nullopt; });
  waits.add(test::syscall_waits(1, HostWaitKind::kFutex, 1000, 1));
  waits.add(test::syscall_waits(2, HostWaitKind::kFutex, 1000, 1));
  waits.add(test::syscall_waits(3, HostWaitKind::kFutex, 1000, 5));
  auto s = waits.summary(start + seconds(1));
  EXPECT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.untracked, 5u);
  waits.sweep(start + seconds(1), [](std::uint32_t) { return false; }, 10, {});
  s = waits.summary(start + seconds(1));
  ASSERT_EQ(s.rows.size(), 1u) << "one summary kept";
  EXPECT_EQ(s.exited_dropped, 1u);
  // A pid seen again after its exit is a new process; its old summary goes.
  waits.add(test::syscall_waits(s.rows[0].pid, HostWaitKind::kFutex, 1000, 1));
  s = waits.summary(start + seconds(1));
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_FALSE(s.rows[0].exited);
  EXPECT_EQ(s.exited_dropped, 2u);
}

TEST_F(HostWaitsTest, RowsComeByPidThenKind) {
  waits.add(test::syscall_waits(20, HostWaitKind::kInputWait, 1000, 1));
  waits.add(test::syscall_waits(20, HostWaitKind::kFutex, 1000, 1));
  waits.add(call(cuda_probe("cudaDeviceSynchronize"), 10, 1000));
  auto s = waits.summary(start + seconds(1));
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].pid, 10u);
  EXPECT_EQ(s.rows[1].kind, HostWaitKind::kFutex);
  EXPECT_EQ(s.rows[2].kind, HostWaitKind::kInputWait);
}

TEST(HostWaits, LiveAnalysisPublishesTheWaitsOfEverySource) {
  LiveAnalysis live;
  live.set_process_alive([](std::uint32_t) { return true; });
  live.set_process_start([](std::uint32_t) { return std::nullopt; });
  auto sync = cuda_probe("cuStreamSynchronize");
  live.on_calls(std::vector<CallEvent>{call(sync, 5, 1'000'000)});
  std::vector<CallCount> counts = {CallCount{5, cuda_probe("cuCtxSynchronize"), 0, 0, "", 1, 0}};
  live.on_counts(counts, {});
  live.on_host_waits(std::vector<HostWaitProcess>{HostWaitProcess{5, "trainer", 0, 0}},
                     std::vector<HostWaitTimings>{test::syscall_waits(5, HostWaitKind::kInputWait, 1000, 2)});
  live.on_end(CounterValues{});
  auto snap = live.snapshot();
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->get<analysis::HostWaitSummary>().rows.size(), 3u);
  EXPECT_EQ(snap->get<analysis::HostWaitSummary>().rows[0].kind, HostWaitKind::kStreamSync);
  EXPECT_EQ(snap->get<analysis::HostWaitSummary>().rows[1].kind, HostWaitKind::kDeviceSync);
  EXPECT_EQ(snap->get<analysis::HostWaitSummary>().rows[2].kind, HostWaitKind::kInputWait);
  EXPECT_EQ(snap->get<analysis::HostWaitSummary>().rows[2].calls, 2u);
}

}  // namespace
}  // namespace eacgm::analysis
