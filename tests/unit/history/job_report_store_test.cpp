// Both history stores give a job report's rows alike: the selected jobs' processes on
// GPUs with their GPU's row and the GPU's other processes, at every tier, so a report
// from the minute or hour rollups adds up to the one from the raw intervals.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "history/job_report.h"
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
    HistoryQuery q = window(kT0, to_ns);
    auto held = store_->held_gpus(q, selector, tier);
    EXPECT_TRUE(held) << held.error();
    return held ? job_report_rows(std::move(held).value(), ReportOptions{0.05, 2.0, "USD"})
                : std::vector<JobReportRow>();
  }
  std::unique_ptr<StoreBackend> backend_;
  std::unique_ptr<Store> store_;
};

ProcessRecord process(std::uint32_t pid, std::string job, std::string pod, std::int64_t t) {
  ProcessRecord p;
  p.key = {pid, kT0 - 100 * kS};
  p.comm = "train";
  p.job = std::move(job);
  p.pod = std::move(pod);
  p.namespace_ = "team-a";
  p.first_ns = t;
  p.last_ns = t + 10 * kS;
  return p;
}

// An interval of `node`: job "train" (pid 10) on GPU 0, busy the first half hour and idle
// after; on node-a pod "notebook" (pid 20) shares GPU 0 with SM shares 30 against 10.
IntervalBatch interval(const std::string& node, std::int64_t i) {
  IntervalBatch b;
  b.t_ns = kT0 + 10 * kS * i;
  b.span_ns = 10 * kS;
  b.processes.push_back(process(10, "train", "", b.t_ns));
  GpuRecord g;
  g.uuid = node + "-GPU-0";
  g.name = "H100";
  g.samples = 10;
  g.util_mean = i < 180 ? 90.0 : 0.0;
  g.sm_active_mean = i < 180 ? 0.8 : 0.01;
  g.tensor_active_mean = 0.5;
  g.memory_total = 80;
  g.power_mean_w = 360;
  g.energy_mj = 10e6;  // 10 kJ a row: 1 kWh an hour
  g.energy_counter_ns = b.span_ns;
  b.gpus.push_back(g);
  const std::uint64_t idle = i < 180 ? 0 : 10;  // every pass of an idle row
  b.gpu_processes.push_back(GpuProcessRecord{0, b.processes[0].key, 10, 40, 30.0, idle, 3600.0});
  if (node == "node-a") {
    b.processes.push_back(process(20, "", "notebook", b.t_ns));
    b.gpu_processes.push_back(GpuProcessRecord{0, b.processes[1].key, 10, 8, 10.0, idle, 3600.0});
  }
  return b;
}

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
  }
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

INSTANTIATE_TEST_SUITE_P(Backends, JobReportStore, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace eacgm::history
