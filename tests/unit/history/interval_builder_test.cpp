// IntervalBuilder: each interval's rows are the calls made in it (per process and
// function, latency included); a process's exit is written once; GPU passes fold into
// means and maxima; kernels and anomalies are written once each; the hook's GPU time is
// written as each interval's launches and durations per process and kernel name.
#include "history/interval_builder.h"

#include <gtest/gtest.h>

#include <map>

#include "analysis/anomaly_detector.h"
#include "analysis/gpu_health.h"
#include "analysis/gpu_times.h"
#include "analysis/hang_diagnosis.h"
#include "history_fixtures.h"

namespace eacgm::history {
namespace {

using test::call;
using test::probe;

class FixedFacts final : public sample::ProcessFacts {
 public:
  sample::RankInfo rank(std::uint32_t pid) const override {
    sample::RankInfo r;
    if (pid == 10) r.rank = 1;
    return r;
  }
  std::string cmdline(std::uint32_t pid) const override {
    return "python train.py --pid " + std::to_string(pid);
  }
  std::optional<std::string> container(std::uint32_t) const override { return std::nullopt; }
  // pid 12 runs in a pod of a Slurm job; its pod's names are known from the second ask on.
  sample::Workload workload(std::uint32_t pid) const override {
    sample::Workload w;
    if (pid != 12) return w;
    w.container_id = "c0ffee";
    w.pod_uid = "5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0";
    w.job = "4242";
    w.job_step = "1";
    if (++asked_12_ > 1) {
      w.pod = "trainer-0";
      w.namespace_ = "ml";
      w.container = "pytorch";
    }
    return w;
  }
  bool alive(std::uint32_t) const override { return true; }

 private:
  mutable int asked_12_ = 0;
};

IntervalBuilder builder() {
  return IntervalBuilder(
      std::make_shared<FixedFacts>(),
      [](std::uint32_t pid) -> std::optional<std::int64_t> { return std::int64_t{1000} * pid; });
}

TEST(IntervalBuilder, AProcessCarriesItsWorkloadWithThePodNamesOnceKnown) {
  auto memcpy_probe = probe("cuda", "cudaMemcpy");
  analysis::ProcessCalls calls;
  calls.add(call(memcpy_probe, 12, 1000));
  calls.add(call(memcpy_probe, 10, 1000));
  IntervalBuilder b = builder();
  IntervalBatch first = b.build(test::snapshot_of(calls), 0, 10);
  ASSERT_EQ(first.processes.size(), 2u);
  const ProcessRecord& p = first.processes[1];
  ASSERT_EQ(p.key.pid, 12u);
  EXPECT_EQ(p.container, "c0ffee");
  EXPECT_EQ(p.pod_uid, "5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0");
  EXPECT_EQ(p.job, "4242");
  EXPECT_EQ(p.job_step, "1");
  // A pod whose names were not known yet is asked again when it is written.
  EXPECT_EQ(p.pod, "trainer-0");
  EXPECT_EQ(p.namespace_, "ml");
  EXPECT_EQ(p.container_name, "pytorch");
  // Outside a pod and a job: nothing.
  EXPECT_EQ(first.processes[0].container, "");
  EXPECT_EQ(first.processes[0].pod, "");
  EXPECT_EQ(first.processes[0].job, "");
}

const FunctionRecord* find(const IntervalBatch& b, std::uint32_t pid, const std::string& fn) {
  for (const auto& f : b.functions) {
    if (f.process.pid == pid && f.function == fn) return &f;
  }
  return nullptr;
}

TEST(IntervalBuilder, EachIntervalHoldsTheCallsMadeInIt) {
  auto memcpy_probe = probe("cuda", "cudaMemcpy");
  auto sync_probe = probe("cuda", "cudaDeviceSynchronize");
  analysis::ProcessCalls calls;
  for (int i = 0; i < 5; ++i) calls.add(call(memcpy_probe, 10, 1000));
  calls.add(call(sync_probe, 11, 50, 2));  // an error
  IntervalBuilder b = builder();
  IntervalBatch first = b.build(test::snapshot_of(calls), 0, 10);
  ASSERT_NE(find(first, 10, "cudaMemcpy"), nullptr);
  EXPECT_EQ(find(first, 10, "cudaMemcpy")->calls, 5u);
  EXPECT_EQ(find(first, 10, "cudaMemcpy")->latency.count, 5u);
  EXPECT_EQ(find(first, 11, "cudaDeviceSynchronize")->errors, 1u);
  ASSERT_EQ(first.processes.size(), 2u);
  EXPECT_EQ(first.processes[0].key.start_ns, 10000);
  EXPECT_EQ(first.processes[0].rank, 1);
  EXPECT_EQ(first.processes[0].cmdline, "python train.py --pid 10");

  // Next interval: three more calls of pid 10, at another duration; pid 11 made none.
  for (int i = 0; i < 3; ++i) calls.add(call(memcpy_probe, 10, 9000));
  IntervalBatch second = b.build(test::snapshot_of(calls), 10, 20);
  ASSERT_EQ(second.functions.size(), 1u);
  const FunctionRecord& f = second.functions.front();
  EXPECT_EQ(f.calls, 3u);
  EXPECT_EQ(f.latency.count, 3u);
  EXPECT_EQ(f.latency.bits, kStoredBits);
  EXPECT_NEAR(f.latency.quantile(0.5), 9000, 9000 * 0.031);
  EXPECT_EQ(f.latency.sum_ns, 27000u);
  ASSERT_EQ(second.processes.size(), 1u);
  EXPECT_EQ(second.processes[0].key.pid, 10u);
  EXPECT_EQ(second.processes[0].first_ns, 0);
  EXPECT_EQ(second.processes[0].last_ns, 20);

  // Nothing new: nothing written.
  IntervalBatch third = b.build(test::snapshot_of(calls), 20, 30);
  EXPECT_TRUE(third.functions.empty());
  EXPECT_TRUE(third.processes.empty());
}

TEST(IntervalBuilder, AnExitIsWrittenOnce) {
  auto p = probe("cuda", "cudaMalloc");
  analysis::ProcessCalls calls;
  calls.add(call(p, 20, 10));
  IntervalBuilder b = builder();
  (void)b.build(test::snapshot_of(calls), 0, 10);
  const auto now = std::chrono::steady_clock::now();
  calls.sweep(
      now, [](std::uint32_t) { return false; }, 16);
  IntervalBatch gone = b.build(test::snapshot_of(calls), 10, 20);
  ASSERT_EQ(gone.processes.size(), 1u);
  EXPECT_TRUE(gone.processes[0].exited);
  IntervalBatch after = b.build(test::snapshot_of(calls), 20, 30);
  EXPECT_TRUE(after.processes.empty());
  // The analysis lets go of it after kKeepExited: the builder forgets it too.
  calls.sweep(
      now + analysis::ProcessCalls::kKeepExited, [](std::uint32_t) { return false; }, 16);
  EXPECT_EQ(calls.process_count(), 0u);
  (void)b.build(test::snapshot_of(calls), 30, 40);
  EXPECT_EQ(b.known_processes(), 0u);
}

TEST(IntervalBuilder, GpuPassesFoldIntoMeansAndMaxima) {
  IntervalBuilder b = builder();
  for (std::uint32_t util : {10u, 30u, 80u}) {
    GpuSnapshot pass;
    pass.sequence = util;
    DeviceSample d;
    d.index = 0;
    d.uuid = "GPU-x";
    d.utilization_gpu_percent = util;
    d.memory_used_bytes = util * 1000;
    d.power_usage_milliwatts = util * 1000;
    pass.devices.push_back(d);
    ProcessSample p;
    p.pid = 30;
    p.gpu_index = 0;
    p.used_memory_bytes = util;
    p.sm_utilization_percent = util;
    pass.processes.push_back(p);
    b.observe_gpu(pass);
    b.observe_gpu(pass);  // the same pass again counts once
  }
  analysis::AnalysisSnapshot snap;
  IntervalBatch batch = b.build(snap, 0, 10);
  ASSERT_EQ(batch.gpus.size(), 1u);
  EXPECT_EQ(batch.gpus[0].samples, 3u);
  EXPECT_DOUBLE_EQ(*batch.gpus[0].util_mean, 40.0);
  EXPECT_EQ(*batch.gpus[0].util_max, 80u);
  EXPECT_EQ(*batch.gpus[0].memory_used_max, 80000u);
  EXPECT_DOUBLE_EQ(*batch.gpus[0].power_max_w, 80.0);
  ASSERT_EQ(batch.gpu_processes.size(), 1u);
  EXPECT_EQ(batch.gpu_processes[0].process.pid, 30u);
  EXPECT_EQ(*batch.gpu_processes[0].memory_max, 80u);
  EXPECT_DOUBLE_EQ(*batch.gpu_processes[0].sm_mean, 40.0);
  // The next interval starts from nothing.
  EXPECT_TRUE(b.build(snap, 10, 20).gpus.empty());
}

// GPM's activities fold over the passes that had them (none on GPU 0's first pass, GPM
// needing two samples); a GPU without GPM (GPU 1) has none.
TEST(IntervalBuilder, GpmActivitiesFoldOverThePassesThatHadThem) {
  IntervalBuilder b = builder();
  const std::optional<double> sm[] = {std::nullopt, 0.5, 0.9};
  for (std::uint64_t i = 0; i < 3; ++i) {
    GpuSnapshot pass;
    pass.sequence = i + 1;
    for (std::uint32_t gpu : {0u, 1u}) {
      DeviceSample d;
      d.index = gpu;
      d.utilization_gpu_percent = 100;
      d.gpm_supported = gpu == 0;
      if (gpu == 0 && sm[i]) {
        GpmCounters c;
        c.sm_active = sm[i];
        c.tensor_active = *sm[i] - 0.5;
        c.dram_active = i == 1 ? std::optional<double>(0.25) : std::nullopt;
        d.gpm = c;
      }
      pass.devices.push_back(d);
    }
    b.observe_gpu(pass);
  }
  analysis::AnalysisSnapshot snap;
  IntervalBatch batch = b.build(snap, 0, 10);
  ASSERT_EQ(batch.gpus.size(), 2u);
  const GpuRecord& g = batch.gpus[0];
  EXPECT_EQ(g.samples, 3u);
  EXPECT_DOUBLE_EQ(g.sm_active_mean.value_or(0), 0.7);
  EXPECT_DOUBLE_EQ(g.sm_active_max.value_or(0), 0.9);
  EXPECT_NEAR(g.tensor_active_mean.value_or(0), 0.2, 1e-12);
  EXPECT_NEAR(g.tensor_active_max.value_or(0), 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(g.dram_active_mean.value_or(0), 0.25);
  EXPECT_DOUBLE_EQ(g.dram_active_max.value_or(0), 0.25);
  const GpuRecord& plain = batch.gpus[1];
  EXPECT_DOUBLE_EQ(plain.util_mean.value_or(0), 100.0);
  EXPECT_FALSE(plain.sm_active_mean);
  EXPECT_FALSE(plain.sm_active_max);
  EXPECT_FALSE(plain.tensor_active_mean);
  EXPECT_FALSE(plain.dram_active_max);
}

// A process's idle passes: those that listed it while its GPU's activity was under the
// threshold, SM activity where GPM gives it (GPU 0, whose utilization says busy
// throughout), else utilization (GPU 1); a GPU with neither is never idle (GPU 2). Each
// process's power sum: its GPU's power in the passes that listed it (GPU 0 only has power).
TEST(IntervalBuilder, IdlePassesAreThoseListingTheProcessOnAnIdleGpu) {
  IntervalBuilder b(
      nullptr, [](std::uint32_t) { return std::optional<std::int64_t>(1); }, 0.1);
  const double activity[] = {0.9, 0.05, 0.0, 0.5, 0.09};
  for (std::uint64_t i = 0; i < 5; ++i) {
    GpuSnapshot pass;
    pass.sequence = i + 1;
    for (std::uint32_t gpu : {0u, 1u, 2u}) {
      DeviceSample d;
      d.index = gpu;
      if (gpu == 0) {
        d.utilization_gpu_percent = 100;
        GpmCounters c;
        c.sm_active = activity[i];
        d.gpm = c;
        d.power_usage_milliwatts = static_cast<std::uint32_t>(100'000 * (i + 1));
      } else if (gpu == 1) {
        d.utilization_gpu_percent = static_cast<std::uint32_t>(activity[i] * 100);
      }
      pass.devices.push_back(d);
      // Process 7 is listed on each GPU in all passes but the last; process 8 on GPU 0
      // only in the last.
      ProcessSample p;
      p.pid = i < 4 ? 7 : 8;
      p.gpu_index = gpu;
      if (i < 4 || gpu == 0) pass.processes.push_back(p);
    }
    b.observe_gpu(pass);
  }
  analysis::AnalysisSnapshot snap;
  IntervalBatch batch = b.build(snap, 0, 10);
  std::map<std::pair<std::uint32_t, std::uint32_t>, GpuProcessRecord> rows;
  for (const auto& r : batch.gpu_processes) rows[{r.gpu, r.process.pid}] = r;
  ASSERT_EQ(rows.size(), 4u);
  auto row = [&rows](std::uint32_t gpu, std::uint32_t pid) { return rows[{gpu, pid}]; };
  EXPECT_EQ(row(0, 7).samples, 4u);
  EXPECT_EQ(row(0, 7).idle_samples, 2u);
  EXPECT_EQ(row(0, 8).samples, 1u);
  EXPECT_EQ(row(0, 8).idle_samples, 1u);
  EXPECT_EQ(row(1, 7).idle_samples, 2u);
  EXPECT_EQ(row(2, 7).samples, 4u);
  EXPECT_EQ(row(2, 7).idle_samples, 0u);
  EXPECT_EQ(row(0, 7).power_sum_w, 100.0 + 200 + 300 + 400);
  EXPECT_EQ(row(0, 8).power_sum_w, 500.0);
  EXPECT_FALSE(row(2, 7).power_sum_w.has_value()) << "no power read: none";
  // The next interval counts afresh.
  EXPECT_TRUE(b.build(snap, 10, 20).gpu_processes.empty());
}

// Each pass's power is split among the processes it listed on the GPU: by SM share where
// each had one, else equally; the processes' splits add up to the power of the passes that
// listed any of them, whatever passes each held (a pass listing none is nobody's).
TEST(IntervalBuilder, EachPassesPowerIsSplitAmongTheProcessesItListed) {
  IntervalBuilder b = builder();
  // Pass 1: no process (100 W). Passes 2-3: pid 7 alone (200, 300 W). Pass 4: 7 and 8 with
  // SM 30 and 10 (400 W). Pass 5: 8 and 9, 9 without an SM share (500 W). Pass 6: 8 alone
  // with SM 0 (600 W).
  struct Listed {
    std::uint32_t pid;
    std::optional<std::uint32_t> sm;
  };
  const std::vector<std::vector<Listed>> passes = {
      {}, {{7, 50}}, {{7, {}}}, {{7, 30}, {8, 10}}, {{8, 20}, {9, {}}}, {{8, 0}}};
  for (std::size_t i = 0; i < passes.size(); ++i) {
    GpuSnapshot pass;
    pass.sequence = i + 1;
    DeviceSample d;
    d.index = 0;
    d.power_usage_milliwatts = static_cast<std::uint32_t>(100'000 * (i + 1));
    pass.devices.push_back(d);
    for (const Listed& l : passes[i]) {
      ProcessSample p;
      p.pid = l.pid;
      p.gpu_index = 0;
      p.sm_utilization_percent = l.sm;
      pass.processes.push_back(p);
    }
    b.observe_gpu(pass);
  }
  analysis::AnalysisSnapshot snap;
  IntervalBatch batch = b.build(snap, 0, 10);
  std::map<std::uint32_t, GpuProcessRecord> rows;
  for (const auto& r : batch.gpu_processes) rows[r.process.pid] = r;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[7].power_share_w.value_or(-1), 200.0 + 300 + 400 * 0.75);
  EXPECT_DOUBLE_EQ(rows[8].power_share_w.value_or(-1), 400 * 0.25 + 500 * 0.5 + 600);
  EXPECT_DOUBLE_EQ(rows[9].power_share_w.value_or(-1), 500 * 0.5);
  EXPECT_DOUBLE_EQ(rows[7].power_share_w.value_or(0) + rows[8].power_share_w.value_or(0) +
                       rows[9].power_share_w.value_or(0),
                   200.0 + 300 + 400 + 500 + 600)
      << "the passes that listed a process, whole";
  EXPECT_DOUBLE_EQ(rows[7].power_sum_w.value_or(-1), 200.0 + 300 + 400);
}

// A GPU's energy per interval: the first from its mean power times the span (no counter
// estimate at its start yet), then the difference of NVML's energy counter at the ends,
// each end the newest reading and the power since. A GPU without the counter: power.
// Passes a second apart (pass t at t s): after every tenth, the interval of those ten.
void build_after_tenth_second(IntervalBuilder& b, std::int64_t t, std::vector<IntervalBatch>& out) {
  if (t % 10 != 9) return;
  analysis::AnalysisSnapshot snap;
  const std::int64_t start = (t - 9) * 1'000'000'000;
  out.push_back(b.build(snap, start, start + 10'000'000'000));
}

TEST(IntervalBuilder, EnergyIsTheCountersDifferenceElsePowerTimesTime) {
  IntervalBuilder b = builder();
  constexpr std::uint64_t kBase = 5'000'000'000;  // mJ since the driver loaded
  std::vector<IntervalBatch> out;
  for (std::int64_t t = 0; t < 30; ++t) {
    GpuSnapshot pass;
    pass.sequence = static_cast<std::uint64_t>(t) + 1;
    pass.time = std::chrono::system_clock::time_point(std::chrono::seconds(t));
    for (std::uint32_t gpu : {0u, 1u}) {
      DeviceSample d;
      d.index = gpu;
      d.power_usage_milliwatts = 100'000;  // 100 W: 1e5 mJ a second
      // Read every 7 s off the pass (a pass carries the newest reading).
      if (gpu == 0) d.energy_total_millijoules = kBase + static_cast<std::uint64_t>(t / 7 * 7) * 100'000;
      pass.devices.push_back(d);
    }
    b.observe_gpu(pass);
    build_after_tenth_second(b, t, out);
  }
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(out[i].gpus.size(), 2u);
    EXPECT_NEAR(out[i].gpus[0].energy_mj.value_or(0), 1e6, 1e-3);
    EXPECT_EQ(out[i].gpus[0].energy_counter_ns.value_or(-1), i == 0 ? 0 : 10'000'000'000);
    EXPECT_NEAR(out[i].gpus[1].energy_mj.value_or(0), 1e6, 1e-3);
    EXPECT_EQ(out[i].gpus[1].energy_counter_ns.value_or(-1), 0);
  }
}

// Between two readings of the counter, the estimate at an interval's end integrates the
// passes' power: a GPU that computes 5 s at 500 W and idles 5 s at 100 W in turns, its
// counter read every 20 s, gets 3 kJ in each 10 s interval (holding the newest power over
// the 10 s since a reading gave 1, 5 and 3 kJ).
TEST(IntervalBuilder, BetweenCounterReadingsTheEnergyFollowsThePassesPower) {
  IntervalBuilder b = builder();
  constexpr std::uint64_t kBase = 5'000'000'000;
  std::uint64_t counter = kBase;  // mJ: each pass's power held until the next pass
  std::uint64_t read = kBase;     // the counter's newest reading
  std::vector<IntervalBatch> out;
  for (std::int64_t t = 0; t < 40; ++t) {
    GpuSnapshot pass;
    pass.sequence = static_cast<std::uint64_t>(t) + 1;
    pass.time = std::chrono::system_clock::time_point(std::chrono::seconds(t));
    DeviceSample d;
    d.index = 0;
    const std::uint32_t mw = (t / 5) % 2 == 0 ? 500'000 : 100'000;
    d.power_usage_milliwatts = mw;
    if (t % 20 == 0) read = counter;
    d.energy_total_millijoules = read;
    pass.devices.push_back(d);
    b.observe_gpu(pass);
    counter += mw;  // one second
    build_after_tenth_second(b, t, out);
  }
  ASSERT_EQ(out.size(), 4u);
  for (std::size_t i = 1; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(out[i].gpus.size(), 1u);
    EXPECT_EQ(out[i].gpus[0].energy_counter_ns.value_or(-1), 10'000'000'000);
    EXPECT_NEAR(out[i].gpus[0].energy_mj.value_or(0), 3e6, 1.0);
  }
}

TEST(IntervalBuilder, AnomaliesAreWrittenOnce) {
  IntervalBuilder b = builder();
  auto summary = std::make_shared<analysis::AnomalySummary>();
  analysis::Anomaly a;
  a.ts_ns = 100;
  a.pid = 5;
  a.domain = "cuda";
  a.name = "cudaMemcpy";
  a.dur_ns = 7;
  summary->recent.push_back(a);
  analysis::AnalysisSnapshot snap;
  snap.parts.put<analysis::AnomalySummary>(summary);
  IntervalBatch first = b.build(snap, 0, 10);
  ASSERT_EQ(first.anomalies.size(), 1u);
  EXPECT_EQ(first.anomalies[0].kind, "call");
  EXPECT_EQ(first.anomalies[0].end_ns, 107);
  EXPECT_TRUE(b.build(snap, 10, 20).anomalies.empty());
}

// A slow call held until its group formed is kept after a newer one of another function,
// and a slow interval with the next that confirmed it: both are written, each once.
TEST(IntervalBuilder, AnomaliesAreWrittenInTheOrderKeptNotOfTime) {
  IntervalBuilder b = builder();
  const auto written = [&](const analysis::AnomalySummary& summary, std::int64_t from) {
    analysis::AnalysisSnapshot snap;
    snap.parts.put<analysis::AnomalySummary>(std::make_shared<const analysis::AnomalySummary>(summary));
    return b.build(snap, from, from + 10).anomalies;
  };
  analysis::AnomalySummary summary;
  analysis::Anomaly call;
  analysis::IntervalAnomaly interval;
  call.ts_ns = 100;
  interval.start_ns = 50;
  summary.recent.push_back(call);
  summary.intervals.push_back(interval);
  summary.kept = summary.interval_total = 1;
  ASSERT_EQ(written(summary, 0).size(), 2u);
  // Kept later, older: a held call and a slow interval of the same start as the last.
  call.ts_ns = 40;
  call.name = "slow_step";
  summary.recent.push_back(call);
  summary.intervals.push_back(interval);
  summary.kept = summary.interval_total = 2;
  const std::vector<AnomalyRecord> next = written(summary, 10);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].function, "slow_step");
  EXPECT_EQ(next[0].t_ns, 40);
  EXPECT_EQ(next[1].kind, "interval");
  EXPECT_TRUE(written(summary, 20).empty());
}

TEST(IntervalBuilder, AGpuHealthEventIsWrittenOnceWithTheProcessInACall) {
  IntervalBuilder b = builder();
  analysis::GpuHealthSummary health;
  health.events.push_back(
      {70,
       1,
       "GPU-1",
       "xid",
       "XID 79",
       1,
       {{8, "idle", {}}, {9, "trainer", {{10, "cuda", "cudaStreamSynchronize", 60, 10}}}}});
  health.total = 1;
  analysis::AnalysisSnapshot snap;
  snap.parts.put(health);
  IntervalBatch batch = b.build(snap, 0, 10);
  ASSERT_EQ(batch.anomalies.size(), 1u);
  const AnomalyRecord& r = batch.anomalies[0];
  EXPECT_EQ(r.kind, "gpu");
  EXPECT_EQ(r.t_ns, 70);
  EXPECT_EQ(r.process.pid, 9u);
  EXPECT_EQ(r.domain, "xid");
  EXPECT_EQ(r.function, "XID 79");
  EXPECT_EQ(r.score, 1.0);
  EXPECT_TRUE(b.build(snap, 10, 20).anomalies.empty());
  // The next event only, though the list still holds the first.
  health.events.push_back({80, 0, "GPU-0", "hw_slowdown", "hw_slowdown began", 1, {}});
  health.total = 2;
  snap.parts.put(health);
  batch = b.build(snap, 20, 30);
  ASSERT_EQ(batch.anomalies.size(), 1u);
  EXPECT_EQ(batch.anomalies[0].domain, "hw_slowdown");
  EXPECT_EQ(batch.anomalies[0].process.pid, 0u);
}

TEST(IntervalBuilder, AHangIsWrittenOnceWhenOver) {
  IntervalBuilder b = builder();
  analysis::AnalysisSnapshot snap;
  analysis::Hang on;
  on.rule = "communicator";
  on.start_ns = 50;
  on.function = "ncclAllReduce";
  on.pid = 9;
  snap.edit<analysis::HangSummary>().current.push_back(on);
  EXPECT_TRUE(b.build(snap, 0, 10).anomalies.empty());  // not while it lasts
  analysis::Hang over = on;
  over.end_ns = 150;
  over.age_ns = 100;
  over.domain = "nccl";
  over.number = 18204;
  snap.edit<analysis::HangSummary>().current.clear();
  snap.edit<analysis::HangSummary>().ended.push_back(over);
  IntervalBatch batch = b.build(snap, 10, 20);
  ASSERT_EQ(batch.anomalies.size(), 1u);
  const AnomalyRecord& r = batch.anomalies[0];
  EXPECT_EQ(r.kind, "hang");
  EXPECT_EQ(r.t_ns, 50);
  EXPECT_EQ(r.end_ns, 150);
  EXPECT_EQ(r.process.pid, 9u);
  EXPECT_EQ(r.domain, "nccl");
  EXPECT_EQ(r.function, "ncclAllReduce");
  EXPECT_EQ(r.score, 18204.0);
  EXPECT_EQ(r.value, 100.0);
  EXPECT_TRUE(b.build(snap, 20, 30).anomalies.empty());
}

}  // namespace
}  // namespace eacgm::history

namespace eacgm::history {
namespace {

GpuSpan gpu_span(std::uint64_t function, std::uint64_t ns, bool queued) {
  GpuSpan s;
  s.pid = 10;
  s.function = function;
  s.stream = 0x10;
  s.start_ns = 1000;
  s.duration_ns = ns;
  s.queued = queued;
  return s;
}

const FunctionRecord* gpu_row(const IntervalBatch& b, const std::string& name) {
  for (const auto& f : b.functions) {
    if (f.domain == kGpuTimeDomain && f.function == name) return &f;
  }
  return nullptr;
}

// The hook's GPU time: per (process, kernel name), each interval's launches and the GPU
// durations of the launches timed in it; two functions of one name make one row.
TEST(IntervalBuilder, GpuTimeRowsHoldEachIntervalsLaunchesAndDurations) {
  analysis::GpuTimes times;
  GpuTimeBatch in;
  in.names = {{10, 1, "gemm", false}, {10, 2, "gemm", false}};
  for (int i = 0; i < 4; ++i) in.spans.push_back(gpu_span(1, 50'000, true));
  in.spans.push_back(gpu_span(2, 50'000, true));
  in.counts = {{10, 1, 64, false}, {10, 2, 16, false}};
  GpuRingState ring;  // a process known only through its hook: its name comes from its ring
  ring.pid = 10;
  ring.comm = "trainer";
  in.rings.push_back(ring);
  times.add(in);
  IntervalBuilder b = builder();
  analysis::AnalysisSnapshot snap;
  snap.edit<analysis::GpuTimeSummary>() = times.summary();
  IntervalBatch first = b.build(snap, 0, 10);
  const FunctionRecord* g = gpu_row(first, "gemm");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->calls, 80u);
  EXPECT_EQ(g->timed, 5u);
  EXPECT_NEAR(g->latency.quantile(0.5), 50'000, 50'000 * 0.031);
  ASSERT_EQ(first.processes.size(), 1u) << "the process is written with its GPU time";
  EXPECT_EQ(first.processes[0].key.pid, 10u);
  EXPECT_EQ(first.processes[0].comm, "trainer");

  // Next interval: 32 more launches of function 1, two timed at 200 us; a kernel that
  // only ever started on an idle stream (upper bounds) appears.
  GpuTimeBatch more;
  more.spans = {gpu_span(1, 200'000, true), gpu_span(1, 200'000, true), gpu_span(3, 9'000, false)};
  more.counts = {{10, 1, 96, false}, {10, 3, 1, false}};
  more.names = {{10, 3, "fill", false}};
  times.add(more);
  snap.edit<analysis::GpuTimeSummary>() = times.summary();
  IntervalBatch second = b.build(snap, 10, 20);
  g = gpu_row(second, "gemm");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->calls, 32u);
  EXPECT_EQ(g->timed, 2u);
  EXPECT_NEAR(g->latency.quantile(0.5), 200'000, 200'000 * 0.031);
  const FunctionRecord* fill = gpu_row(second, "fill");
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->calls, 1u);
  EXPECT_EQ(fill->latency.count, 1u);

  // The idle-only kernel's first queued span: its figures now come from the queued
  // spans, written in full; nothing else changed.
  GpuTimeBatch queued;
  queued.spans = {gpu_span(3, 7'000, true)};
  queued.counts = {{10, 3, 2, false}};
  times.add(queued);
  snap.edit<analysis::GpuTimeSummary>() = times.summary();
  IntervalBatch third = b.build(snap, 20, 30);
  EXPECT_EQ(gpu_row(third, "gemm"), nullptr);
  fill = gpu_row(third, "fill");
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->calls, 1u);
  EXPECT_EQ(fill->timed, 1u);
  EXPECT_NEAR(fill->latency.quantile(0.5), 7'000, 7'000 * 0.031);

  // Nothing new: nothing written.
  snap.edit<analysis::GpuTimeSummary>() = times.summary();
  EXPECT_TRUE(b.build(snap, 30, 40).functions.empty());
}

}  // namespace
}  // namespace eacgm::history
