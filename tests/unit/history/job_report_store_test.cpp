// Both history stores give a job report's rows alike: the selected jobs' processes on
// GPUs with their GPU's row and the GPU's other processes, at every tier, so a report
// from the minute or hour rollups adds up to the one from the raw intervals.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "analysis/latency_sketch.h"
#include "history/job_report.h"
#include "history/job_report_read.h"
#include "job_batches.h"
#include "store_backends.h"
#include "store_batches.h"

namespace eacgm::history {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

class JobReportStore : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = backend_named(GetParam());
    ASSERT_EQ(backend_->fresh(), "");
    auto s = backend_->open();
    ASSERT_TRUE(s) << s.error();
    store_ = std::move(s).value();
  }
  std::vector<JobReportRow> report(const JobSelector& selector, Tier tier, std::int64_t to_ns) {
    auto rows = read_job_report(*store_, window(kT0, to_ns), selector, tier, ReportOptions{0.05, 2.0, "USD"});
    EXPECT_TRUE(rows) << rows.error();
    return rows ? std::move(rows).value() : std::vector<JobReportRow>();
  }
  std::unique_ptr<StoreBackend> backend_;
  std::unique_ptr<Store> store_;
};

TEST_P(JobReportStore, JobsAndPodsAcrossNodesAddUpAtEveryTier) {
  // An hour on two nodes, then rolled up.
  for (std::int64_t i = 0; i < 360; ++i) {
    for (const char* node : {"node-a", "node-b"}) ASSERT_TRUE(store_->write(node, interval(node, i)));
  }
  const std::int64_t end = kT0 + 3600 * kS;
  for (const char* node : {"node-a", "node-b"})
    ASSERT_TRUE(store_->maintain(node, end + 3600 * kS, Retention{}));

  for (Tier tier : {Tier::kRaw, Tier::kMinute, Tier::kHour}) {
    SCOPED_TRACE(tier_name(tier));
    auto all = report({}, tier, end);
    ASSERT_EQ(all.size(), 2u);
    // The same idle hours (one GPU-hour held each way): the job has more GPU-hours.
    const JobReportRow& train = all[0].job == "train" ? all[0] : all[1];
    const JobReportRow& pod = all[0].job == "train" ? all[1] : all[0];
    EXPECT_EQ(train.nodes, (std::vector<std::string>{"node-a", "node-b"}));
    EXPECT_EQ(train.gpus, 2u);
    EXPECT_NEAR(train.gpu_hours, 2.0, 1e-9);
    EXPECT_NEAR(train.cost, 4.0, 1e-9);
    EXPECT_EQ(train.activity_basis, "sm_active");
    EXPECT_NEAR(train.tensor_active_mean.value_or(0), 0.5, 1e-9);
    EXPECT_EQ(train.memory_peak_bytes, 40u);
    EXPECT_EQ(train.memory_capacity_bytes, 80u);
    // node-b's GPU whole, 3/4 of node-a's.
    EXPECT_NEAR(train.energy_kwh, 1.75, 1e-6);
    EXPECT_EQ(train.energy_basis, "counter");
    EXPECT_EQ(train.share_basis, "sole+sm");
    EXPECT_EQ(pod.job, "team-a/notebook");
    EXPECT_NEAR(pod.gpu_hours, 1.0, 1e-9);
    EXPECT_NEAR(pod.energy_kwh, 0.25, 1e-6);
    // The idle passes add up in the rollups: an hour's row, busy on average, is half idle.
    EXPECT_NEAR(train.idle_gpu_hours, 1.0, 1e-9);
    EXPECT_NEAR(train.idle_cost, 2.0, 1e-9);
    EXPECT_EQ(train.longest_idle_ns, 1800 * kS);
    // Where the time went: an hour of each node's process, 50 ms of waits and 500 ms of
    // GPU time (a fifth NCCL's) each 10 s.
    const JobTime& t = train.time;
    EXPECT_EQ(t.processes, 2u);
    EXPECT_NEAR(t.wall_seconds, 7200, 1e-6);
    EXPECT_NEAR(t.host_wait_seconds, 36, 1e-6);
    ASSERT_EQ(t.host_waits.size(), 1u);
    EXPECT_EQ(t.host_waits[0].kind, "stream_sync");
    EXPECT_EQ(t.host_waits[0].calls, 7200u);
    EXPECT_FALSE(t.host_waits[0].estimated);
    ASSERT_TRUE(t.gpu_seconds);
    EXPECT_NEAR(*t.gpu_seconds, 360, 1e-6);
    EXPECT_NEAR(t.nccl_gpu_seconds.value_or(0), 72, 1e-6);
    EXPECT_EQ(t.nccl_timed_launches, 7200u);
    EXPECT_EQ(t.gpu_timed_launches, 14400u);
    ASSERT_EQ(t.top_kernels.size(), 2u);
    EXPECT_EQ(t.top_kernels[0].name, "gemm");
    EXPECT_EQ(t.top_kernels[0].launches, 72000u);
    EXPECT_NEAR(t.top_kernels[0].gpu_seconds, 288, 1e-6);
    // The notebook: 100 ms of estimated copies each 10 s of its hour; no GPU time.
    EXPECT_NEAR(pod.time.wall_seconds, 3600, 1e-6);
    EXPECT_NEAR(pod.time.host_wait_seconds, 72, 1e-6);
    ASSERT_EQ(pod.time.host_waits.size(), 1u);
    EXPECT_EQ(pod.time.host_waits[0].kind, "blocking_copy");
    EXPECT_TRUE(pod.time.host_waits[0].estimated);
    EXPECT_FALSE(pod.time.gpu_seconds);
    EXPECT_FALSE(pod.time.nccl_gpu_seconds);
  }
  // A window of the second half hour: the lives and rows in it only.
  auto half = read_job_report(*store_, window(kT0 + 1800 * kS, end), {JobSelector::By::kJob, "train"},
                              Tier::kRaw, ReportOptions{});
  ASSERT_TRUE(half) << half.error();
  ASSERT_EQ(half->size(), 1u);
  EXPECT_NEAR((*half)[0].time.wall_seconds, 3600, 1e-6);
  EXPECT_NEAR((*half)[0].time.host_wait_seconds, 18, 1e-6);
  EXPECT_NEAR((*half)[0].time.gpu_seconds.value_or(0), 180, 1e-6);
  auto job = report({JobSelector::By::kJob, "train"}, Tier::kRaw, end);
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(job[0].job, "train");
  auto pod = report({JobSelector::By::kPod, "team-a/notebook"}, Tier::kRaw, end);
  ASSERT_EQ(pod.size(), 1u);
  EXPECT_EQ(pod[0].job, "team-a/notebook");
  EXPECT_EQ(report({JobSelector::By::kPod, "notebook"}, Tier::kRaw, end).size(), 1u);
  EXPECT_EQ(report({JobSelector::By::kNamespace, "team-a"}, Tier::kRaw, end).size(), 2u);
  EXPECT_TRUE(report({JobSelector::By::kNamespace, "team-b"}, Tier::kRaw, end).empty());
  EXPECT_TRUE(report({JobSelector::By::kJob, "other"}, Tier::kRaw, end).empty());
}

// The same rows written into both stores give the same report, figure for figure, at
// every tier: equal, not near.
TEST(JobReportStoresAgree, RowByRowAtEveryTier) {
  std::vector<std::unique_ptr<StoreBackend>> backends;
  std::vector<std::unique_ptr<Store>> stores;
  for (const char* name : {"sqlite", "postgres"}) {
    backends.push_back(backend_named(name));
    ASSERT_EQ(backends.back()->fresh(), "");
    auto s = backends.back()->open();
    ASSERT_TRUE(s) << s.error();
    stores.push_back(std::move(s).value());
  }
  const std::int64_t end = kT0 + 3600 * kS;
  for (auto& store : stores) {
    for (std::int64_t i = 0; i < 360; ++i) {
      for (const char* node : {"node-a", "node-b"}) ASSERT_TRUE(store->write(node, interval(node, i)));
    }
    for (const char* node : {"node-a", "node-b"})
      ASSERT_TRUE(store->maintain(node, end + 3600 * kS, Retention{}));
  }
  for (Tier tier : {Tier::kRaw, Tier::kMinute, Tier::kHour}) {
    SCOPED_TRACE(tier_name(tier));
    std::vector<std::vector<JobReportRow>> got;
    for (auto& store : stores) {
      // Past the first 10 minutes (an hour's rows hold whole hours only).
      const std::int64_t from = tier == Tier::kHour ? kT0 : kT0 + 600 * kS;
      auto rows = read_job_report(*store, window(from, end), {}, tier, ReportOptions{0.05, 2.0, "USD"});
      ASSERT_TRUE(rows) << rows.error();
      got.push_back(std::move(rows).value());
    }
    ASSERT_EQ(got[0].size(), 2u);
    ASSERT_EQ(got[0].size(), got[1].size());
    for (std::size_t i = 0; i < got[0].size(); ++i) EXPECT_EQ(figures(got[0][i]), figures(got[1][i]));
    // Some time in each (the comparison is not of two empty reports).
    EXPECT_GT(got[0][0].time.host_wait_seconds, 0);
  }
}

// A report reads each node's hours rolled up for jobs (job_gpus, job_calls) and only the
// window's other rows in detail: figure for figure the report of the hour rows. A store
// whose hours have no job rollups (made before them) gets them at its next maintenance.
TEST_P(JobReportStore, TheJobRollupsGiveTheReportOfTheHourRows) {
  const std::int64_t end = kT0 + 7200 * kS;
  for (std::int64_t i = 0; i < 720; ++i) {
    for (const char* node : {"node-a", "node-b"}) ASSERT_TRUE(store_->write(node, interval(node, i)));
  }
  auto maintain = [&] {
    for (const char* node : {"node-a", "node-b"})
      ASSERT_TRUE(store_->maintain(node, end + 3600 * kS, Retention{}));
  };
  maintain();
  const std::string rolled =
      "SELECT (SELECT count(*) FROM job_gpus) || ' ' || (SELECT count(*) FROM job_calls)";
  // Two hours of two nodes: 3 GPU rows an hour, 7 of waits and GPU time.
  EXPECT_EQ(backend_->query(rolled), "6 14");
  auto all = [&] {
    std::vector<std::string> out;
    for (Tier tier : {Tier::kRaw, Tier::kHour}) {
      for (const JobSelector& selector : {JobSelector{}, JobSelector{JobSelector::By::kJob, "train"},
                                          JobSelector{JobSelector::By::kNamespace, "team-a"}}) {
        // From the tenth minute: its first hour from the finer tiers, the second rolled.
        for (std::int64_t from : {kT0, kT0 + 600 * kS}) {
          auto rows =
              read_job_report(*store_, window(from, end), selector, tier, ReportOptions{0.05, 2.0, "USD"});
          EXPECT_TRUE(rows) << rows.error();
          if (!rows) continue;
          for (const JobReportRow& r : *rows) out.push_back(figures(r));
        }
      }
    }
    return out;
  };
  const std::vector<std::string> with = all();
  EXPECT_EQ(with.size(), 20u);
  // They are what is read: their calls doubled, the reports differ.
  ASSERT_EQ(backend_->exec("UPDATE job_calls SET calls = calls * 2;"), "");
  EXPECT_NE(all(), with);
  ASSERT_EQ(backend_->exec("DELETE FROM job_gpus; DELETE FROM job_calls; DELETE FROM meta WHERE key LIKE "
                           "'rolled_jobs:%';"),
            "");
  EXPECT_EQ(all(), with);
  maintain();
  EXPECT_EQ(backend_->query(rolled), "6 14");
  EXPECT_EQ(all(), with);
}

// Every figure of a row, the GPU's as well as figures()'s.
std::string every_figure(const JobReportRow& r) {
  return fmt::format("{} {} {} {} {} {} {} {} {} {}", figures(r), r.active_gpu_hours, r.unmeasured_gpu_hours,
                     r.longest_idle_ns, r.activity_basis, r.tensor_active_mean.value_or(-1),
                     r.memory_peak_bytes, r.memory_capacity_bytes.value_or(0), r.energy_basis, r.idle_cost);
}

// A namespace's report reads its rolled hours from the namespace rollup (PostgreSQL;
// SQLite's from the job rollups), figure for figure the report of its jobs from the job
// rollups, whatever part of the window is rolled; and the rollup is what it reads.
TEST_P(JobReportStore, TheNamespaceRollupGivesTheReportOfTheJobRollups) {
  const std::int64_t end = kT0 + 7200 * kS;
  for (std::int64_t i = 0; i < 720; ++i) {
    for (const char* node : {"node-a", "node-b"}) ASSERT_TRUE(store_->write(node, interval(node, i)));
  }
  for (const char* node : {"node-a", "node-b"}) {
    auto st = store_->maintain(node, end + 3600 * kS, Retention{});
    ASSERT_TRUE(st) << st.error();
  }
  const bool postgres = GetParam() == "postgres";
  // Two hours: node-a's GPU held by the job and the pod, node-b's by the job.
  EXPECT_EQ(backend_->query("SELECT count(*) FROM namespace_gpus"), postgres ? "6" : "0");
  auto figures_of = [&](std::int64_t from, const std::vector<JobSelector>& selectors) {
    std::vector<std::string> out;
    for (const JobSelector& selector : selectors) {
      auto rows =
          read_job_report(*store_, window(from, end), selector, Tier::kHour, ReportOptions{0.05, 2.0, "USD"});
      EXPECT_TRUE(rows) << rows.error();
      if (!rows) continue;
      for (const JobReportRow& r : *rows) out.push_back(every_figure(r));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<JobSelector> jobs = {{JobSelector::By::kJob, "train"},
                                         {JobSelector::By::kPod, "team-a/notebook"}};
  const std::vector<JobSelector> ns = {{JobSelector::By::kNamespace, "team-a"}};
  for (std::int64_t from : {kT0, kT0 + 600 * kS}) {
    SCOPED_TRACE(from);
    const auto by_jobs = figures_of(from, jobs);
    ASSERT_EQ(by_jobs.size(), 2u);
    EXPECT_EQ(figures_of(from, ns), by_jobs);
  }
  if (!postgres) return;
  ASSERT_EQ(backend_->exec("UPDATE namespace_gpus SET memory = memory * 2;"), "");
  EXPECT_NE(figures_of(kT0, ns), figures_of(kT0, jobs));
}

INSTANTIATE_TEST_SUITE_P(Backends, JobReportStore, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace eacgm::history
