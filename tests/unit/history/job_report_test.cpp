// The job report's arithmetic on hand-made rows: GPU-hours, activity and its basis, idle
// hours and the longest idle stretch, the energy split on a shared GPU, the cost.
#include "history/job_report.h"

#include <gtest/gtest.h>

#include <cmath>

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kSpan = 600 * kS;  // ten-minute rows: 1/6 h each

HeldGpuRow held(std::string job, std::int64_t i, double sm_active) {
  HeldGpuRow r;
  r.job = std::move(job);
  r.node = "node-a";
  r.gpu = 0;
  r.t_ns = i * kSpan;
  r.span_ns = kSpan;
  r.pid = 100;
  r.start_ns = 1;
  r.memory_max = 10;
  r.sm_active_mean = sm_active;
  r.memory_total = 80;
  r.energy_mj = 3.6e9;  // 1 kWh a row
  r.energy_counter_ns = kSpan;
  return r;
}

TEST(JobReport, IdleHoursAndLongestStretchOfOneGpu) {
  // Busy, idle, idle, busy, idle: 5/6 h held, 3/6 h idle, the longest stretch two rows.
  std::vector<HeldGpuRow> rows;
  const double activity[] = {0.9, 0.01, 0.02, 0.5, 0.0};
  for (int i = 0; i < 5; ++i) rows.push_back(held("j1", i, activity[i]));
  ReportOptions options;
  options.gpu_hour_price = 6;
  options.currency = "USD";
  auto out = job_report_rows(rows, options);
  ASSERT_EQ(out.size(), 1u);
  const JobReportRow& j = out[0];
  EXPECT_EQ(j.job, "j1");
  EXPECT_EQ(j.gpus, 1u);
  EXPECT_NEAR(j.gpu_hours, 5.0 / 6, 1e-9);
  EXPECT_NEAR(j.idle_gpu_hours, 3.0 / 6, 1e-9);
  EXPECT_NEAR(j.active_gpu_hours, (0.9 + 0.01 + 0.02 + 0.5) / 6, 1e-9);
  EXPECT_EQ(j.longest_idle_ns, 2 * kSpan);
  EXPECT_EQ(j.activity_basis, "sm_active");
  EXPECT_NEAR(j.cost, 5.0, 1e-9);
  EXPECT_NEAR(j.idle_cost, 3.0, 1e-9);
  EXPECT_NEAR(j.energy_kwh, 5.0, 1e-9);
  EXPECT_EQ(j.energy_basis, "counter");
  EXPECT_EQ(j.share_basis, "sole");
  EXPECT_EQ(j.first_ns, 0);
  EXPECT_EQ(j.last_ns, 5 * kSpan);
  EXPECT_EQ(j.memory_peak_bytes, 10u);
  EXPECT_EQ(j.memory_capacity_bytes, 80u);
}

TEST(JobReport, AGapEndsAnIdleStretch) {
  // Idle rows 0, 1, then 3, 4, 5 (row 2 not held): the longest stretch is three rows.
  std::vector<HeldGpuRow> rows;
  for (int i : {0, 1, 3, 4, 5}) rows.push_back(held("j", i, 0.0));
  auto out = job_report_rows(rows, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].longest_idle_ns, 3 * kSpan);
  // Two GPUs idle side by side: each GPU's stretch counts on its own.
  rows.clear();
  for (int i = 0; i < 2; ++i) {
    rows.push_back(held("j", i, 0.0));
    rows.push_back(held("j", i, 0.0));
    rows.back().gpu = 1;
  }
  out = job_report_rows(rows, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gpus, 2u);
  EXPECT_EQ(out[0].longest_idle_ns, 2 * kSpan);
  EXPECT_NEAR(out[0].idle_gpu_hours, 4.0 / 6, 1e-9);
}

TEST(JobReport, UtilizationWhereNoGpmAndTheThresholdAsSet) {
  std::vector<HeldGpuRow> rows{held("j", 0, 0), held("j", 1, 0)};
  for (auto& r : rows) r.sm_active_mean.reset();
  rows[0].util_mean = 8;   // 0.08: idle under 0.1, busy under 0.05
  rows[1].util_mean = 50;  // 0.5
  ReportOptions options;
  options.idle_threshold = 0.1;
  auto out = job_report_rows(rows, options);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].activity_basis, "utilization");
  EXPECT_NEAR(out[0].idle_gpu_hours, 1.0 / 6, 1e-9);
  EXPECT_NEAR(out[0].active_gpu_hours, 0.58 / 6, 1e-9);
  EXPECT_EQ(job_report_rows(rows, {})[0].idle_gpu_hours, 0.0);
  // Neither: held, unmeasured, never idle.
  for (auto& r : rows) r.util_mean.reset();
  out = job_report_rows(rows, {});
  EXPECT_EQ(out[0].activity_basis, "none");
  EXPECT_NEAR(out[0].unmeasured_gpu_hours, 2.0 / 6, 1e-9);
  EXPECT_EQ(out[0].idle_gpu_hours, 0.0);
}

TEST(JobReport, ASharedGpusEnergyIsSplitBySmShareElseEqually) {
  // Two jobs on one GPU: SM shares 30 and 10 (of 40), then one row without shares.
  HeldGpuRow a = held("a", 0, 0.4), b = held("b", 0, 0.4);
  for (HeldGpuRow* r : {&a, &b}) {
    r->gpu_processes = 2;
    r->gpu_processes_with_sm = 2;
    r->gpu_sm_sum = 40;
  }
  a.sm_mean = 30;
  b.sm_mean = 10;
  b.pid = 200;
  HeldGpuRow a2 = held("a", 1, 0.4), b2 = held("b", 1, 0.4), c2 = held("b", 1, 0.4);
  for (HeldGpuRow* r : {&a2, &b2, &c2}) r->gpu_processes = 3;  // no SM shares: per process
  b2.pid = 200;
  c2.pid = 300;
  auto out = job_report_rows({a, b, a2, b2, c2}, {});
  ASSERT_EQ(out.size(), 2u);
  const JobReportRow& ja = out[0].job == "a" ? out[0] : out[1];
  const JobReportRow& jb = out[0].job == "a" ? out[1] : out[0];
  EXPECT_NEAR(ja.energy_kwh, 0.75 + 1.0 / 3, 1e-9);
  EXPECT_NEAR(jb.energy_kwh, 0.25 + 2.0 / 3, 1e-9);
  EXPECT_EQ(ja.share_basis, "sm+equal");
  // Each job holds the GPU whole for its hours; its processes' memory adds up.
  EXPECT_NEAR(ja.gpu_hours, 2.0 / 6, 1e-9);
  EXPECT_NEAR(jb.gpu_hours, 2.0 / 6, 1e-9);
  EXPECT_EQ(jb.memory_peak_bytes, 20u);
}

// Two jobs holding different passes of one interval (A the first six at 300 W, B the
// last six at 500 W, both in passes 5-6 with SM shares 40 and 60): each pass's power split
// among the processes it listed adds up to the energy of every pass either held, where the
// held part times the SM share over the interval would lose a third of it.
TEST(JobReport, JobsHoldingDifferentPassesOfAnIntervalDivideItsEnergyWhole) {
  const std::vector<double> power = {300, 300, 300, 300, 400, 400, 500, 500, 500, 500};
  HeldGpuRow a = held("a", 0, 0.8), b = held("b", 0, 0.8);
  b.pid = 200;
  double all_w = 0;
  for (double w : power) all_w += w;
  for (HeldGpuRow* r : {&a, &b}) {
    r->gpu_processes = 2;
    r->gpu_processes_with_sm = 2;
    r->gpu_sm_sum = 100;
    r->gpu_samples = 10;
    r->power_mean_w = all_w / 10;
    r->energy_mj = all_w * 60 * 1000;  // 600 s at the passes' power
    r->power_sum_w = 0;
    r->power_share_w = 0;
  }
  a.sm_mean = 40;
  b.sm_mean = 60;
  for (std::size_t k = 0; k < power.size(); ++k) {
    const bool in_a = k < 6, in_b = k >= 4;
    if (in_a) ++a.samples, *a.power_sum_w += power[k];
    if (in_b) ++b.samples, *b.power_sum_w += power[k];
    *a.power_share_w += in_a ? (in_b ? power[k] * 0.4 : power[k]) : 0;
    *b.power_share_w += in_b ? (in_a ? power[k] * 0.6 : power[k]) : 0;
  }
  auto out = job_report_rows({a, b}, {});
  ASSERT_EQ(out.size(), 2u);
  const JobReportRow& ja = out[0].job == "a" ? out[0] : out[1];
  const JobReportRow& jb = out[0].job == "a" ? out[1] : out[0];
  const double kwh = *a.energy_mj / 3.6e9;
  EXPECT_NEAR(ja.energy_kwh + jb.energy_kwh, kwh, 1e-9);
  EXPECT_NEAR(ja.energy_kwh, kwh * (4 * 300 + 2 * 400 * 0.4) / all_w, 1e-9);
  EXPECT_EQ(ja.share_basis, "sm");
  // Rows written before the split: the held passes' part times the SM share is not a
  // partition of the interval.
  a.power_share_w.reset();
  b.power_share_w.reset();
  auto old = job_report_rows({a, b}, {});
  EXPECT_LT(old[0].energy_kwh + old[1].energy_kwh, 0.7 * kwh);
}

TEST(JobReport, PowerTimesTimeWhereTheCounterIsMissing) {
  HeldGpuRow r = held("j", 0, 0.5);
  r.energy_mj.reset();
  r.energy_counter_ns.reset();
  r.power_mean_w = 600;  // 600 W over 1/6 h: 0.1 kWh
  HeldGpuRow p = held("j", 1, 0.5);
  p.energy_counter_ns = 0;  // written from power by the agent
  p.energy_mj = 0.2 * 3.6e9;
  auto out = job_report_rows({r, p}, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].energy_kwh, 0.3, 1e-9);
  EXPECT_EQ(out[0].energy_basis, "power");
  out = job_report_rows({r, held("j", 1, 0.5)}, {});
  EXPECT_EQ(out[0].energy_basis, "counter+power");
  r.power_mean_w.reset();
  out = job_report_rows({r}, {});
  EXPECT_EQ(out[0].energy_basis, "none");
  EXPECT_EQ(out[0].energy_kwh, 0.0);
}

TEST(JobReport, RowsComeMostIdleFirstWithTensorActivityWeighted) {
  std::vector<HeldGpuRow> rows{held("busy", 0, 0.9), held("idle", 0, 0.0), held("idle", 1, 0.0)};
  rows[0].tensor_active_mean = 0.6;
  rows[0].gpu = 1;
  rows[1].tensor_active_mean = 0.0;
  auto out = job_report_rows(rows, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].job, "idle");
  EXPECT_EQ(out[1].job, "busy");
  EXPECT_NEAR(*out[1].tensor_active_mean, 0.6, 1e-12);
  EXPECT_NEAR(*out[0].tensor_active_mean, 0.0, 1e-12);  // one of its two rows had it
  EXPECT_TRUE(job_report_rows({}, {}).empty());
}

// A job that computes 10 s and sleeps 10 s for two minutes, from 3 s into the first
// 10 s interval, its GPU sampled each second 0.4 s into it: the rows the agent writes
// (passes listing it, idle passes, the GPU's passes, mean activity, energy) and the
// report from them, to the pass.
TEST(JobReport, ComputeAndSleepCyclesAreIdleHalfTheTimeAtPassResolution) {
  constexpr double kStart = 3, kEnd = 123, kBusyW = 300, kIdleW = 100;
  auto computing = [&](double t) { return t >= kStart && t < kEnd && std::fmod(t - kStart, 20) < 10; };
  auto listed = [&](double t) { return t >= kStart && t < kEnd; };
  std::vector<HeldGpuRow> rows;
  double life_j = 0;  // the energy counter's difference over the job's life
  for (std::int64_t i = 0; i < 13; ++i) {
    HeldGpuRow r;
    r.job = "duty";
    r.node = "node-a";
    r.t_ns = i * 10 * kS;
    r.span_ns = 10 * kS;
    r.pid = 100;
    r.sm_active_mean = 0;
    r.idle_samples = 0;
    r.energy_mj = 0;
    r.energy_counter_ns = r.span_ns;
    r.power_mean_w = 0;
    r.power_sum_w = 0;
    for (int k = 0; k < 10; ++k) {
      const double t = static_cast<double>(i) * 10 + k + 0.4;
      const double w = computing(t) ? kBusyW : kIdleW;
      ++r.gpu_samples;
      *r.sm_active_mean += computing(t) ? 0.09 : 0;  // 0.9 busy, a tenth of the mean
      *r.power_mean_w += w / 10;
      if (!listed(t)) continue;
      ++r.samples;
      *r.power_sum_w += w;
      if (!computing(t)) ++*r.idle_samples;
    }
    // The GPU's power, integrated over the interval a millisecond at a time.
    for (int ms = 0; ms < 10000; ++ms) {
      const double t = static_cast<double>(i) * 10 + ms / 1000.0;
      const double j = (computing(t) ? kBusyW : kIdleW) / 1000.0;
      *r.energy_mj += j * 1000;
      if (listed(t)) life_j += j;
    }
    if (r.samples > 0) rows.push_back(r);
  }
  auto out = job_report_rows(rows, {});
  ASSERT_EQ(out.size(), 1u);
  const JobReportRow& j = out[0];
  const double held_s = j.gpu_hours * 3600;
  EXPECT_NEAR(held_s, 120, 1e-6);
  EXPECT_NEAR(j.idle_gpu_hours / j.gpu_hours, 0.5, 1e-9);
  EXPECT_EQ(j.longest_idle_ns, 10 * kS);
  // Held from the third second of the first interval to the third of the last.
  EXPECT_EQ(j.first_ns, 3 * kS);
  EXPECT_EQ(j.last_ns, 123 * kS);
  // Active: held time by the interval's mean, diluted where the job came mid-interval.
  EXPECT_NEAR(j.active_gpu_hours * 3600, 0.9 * 60, 0.9 * 3);
  // Energy: each interval's by the power of its held passes against all of its passes'
  // (the first interval's idle passes before the job draw less than its busy ones).
  EXPECT_NEAR(j.energy_kwh * 3.6e6 / life_j, 1.0, 0.005);
  // Rows written before the power sum: by the held part of the passes, the idle passes
  // before the job taking a share of its busy seconds.
  for (HeldGpuRow& r : rows) r.power_sum_w.reset();
  const double by_passes = job_report_rows(rows, {})[0].energy_kwh * 3.6e6 / life_j;
  EXPECT_NEAR(by_passes, 1.0, 0.03);
  EXPECT_GT(std::abs(by_passes - 1.0), std::abs(j.energy_kwh * 3.6e6 / life_j - 1.0));
}

// Rows written before idle passes were counted: the interval's mean activity decides,
// over the part held.
TEST(JobReport, RowsWithoutIdlePassesFallBackToTheIntervalsActivity) {
  std::vector<HeldGpuRow> rows{held("j", 0, 0.01), held("j", 1, 0.01)};
  rows[0].samples = 5;
  rows[0].gpu_samples = 10;
  rows[1].samples = 10;
  rows[1].gpu_samples = 10;
  auto out = job_report_rows(rows, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].gpu_hours, 1.5 / 6, 1e-9);
  EXPECT_NEAR(out[0].idle_gpu_hours, 1.5 / 6, 1e-9);
  EXPECT_EQ(out[0].longest_idle_ns, kSpan * 3 / 2);
  EXPECT_EQ(out[0].first_ns, kSpan / 2);
  EXPECT_NEAR(out[0].energy_kwh, 1.5, 1e-9);
  // Two processes of the job on the GPU: the part of the one listed longer.
  rows[0].idle_samples = 2;
  rows.push_back(rows[0]);
  rows.back().pid = 101;
  rows.back().samples = 8;
  rows.back().idle_samples.reset();
  out = job_report_rows(rows, {});
  EXPECT_NEAR(out[0].gpu_hours, 1.8 / 6, 1e-9);
  // One row of the interval without idle passes: the interval's activity decides.
  EXPECT_NEAR(out[0].idle_gpu_hours, 1.8 / 6, 1e-9);
  rows[1].idle_samples = 0;
  rows[1].sm_active_mean = 0.5;
  rows[2].idle_samples = 3;  // the same interval as rows[0]
  rows[0].idle_samples = 4;
  out = job_report_rows(rows, {});
  EXPECT_NEAR(out[0].idle_gpu_hours, 0.4 / 6, 1e-9);
}

}  // namespace
}  // namespace eacgm::history
