// RollupSeries: per-second calls, errors and domains; GPU utilization and GPM activity
// means and memory;
// the ring forgets seconds older than an hour; a published view is not changed by later
// writes (copy on write of shared chunks); the window bounds what points() returns.
#include "analysis/rollup_series.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace eacgm::analysis {
namespace {

std::shared_ptr<ProbeInfo> probe(const char* domain, const char* function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.domain = domain;
  p->spec.ret = ReturnKind::kInt32;
  return p;
}

CallEvent call(const std::shared_ptr<ProbeInfo>& p, std::int64_t second, std::int64_t ret = 0) {
  CallEvent e;
  e.probe = p;
  e.ts_ns = static_cast<std::uint64_t>(second) * 1'000'000'000 + 5;
  e.has_exit = true;
  e.ret = ret;
  return e;
}

GpuSnapshot gpus(std::int64_t second, std::uint32_t util, std::uint64_t used) {
  GpuSnapshot s;
  s.time = std::chrono::system_clock::time_point(std::chrono::seconds(second));
  for (unsigned i = 0; i < 2; ++i) {
    DeviceSample d;
    d.index = i;
    d.utilization_gpu_percent = util + i;
    d.memory_used_bytes = used + i;
    s.devices.push_back(d);
  }
  return s;
}

TEST(RollupSeries, CountsCallsErrorsAndDomainsPerSecond) {
  RollupSeries series;
  auto malloc_probe = probe("cuda", "cudaMalloc");
  auto nccl = probe("nccl", "ncclAllReduce");
  series.add(call(malloc_probe, 1000));
  series.add(call(malloc_probe, 1000, 2));  // an error
  series.add(call(nccl, 1000));
  series.add(call(nccl, 1002));
  CallEvent nested = call(nccl, 1002);
  nested.nested = true;
  series.add(nested);
  series.add(gpus(1000, 10, 100));
  series.add(gpus(1000, 30, 200));
  auto view = series.view();
  auto points = view.points(1002, 900);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].t, 1000);
  EXPECT_EQ(points[0].calls, 3u);
  EXPECT_EQ(points[0].errors, 1u);
  ASSERT_EQ(view.domains().size(), 2u);
  EXPECT_EQ(view.domains()[0], "cuda");
  EXPECT_EQ(points[0].domains[0], 2u);
  EXPECT_EQ(points[0].domains[1], 1u);
  ASSERT_EQ(points[0].gpu_count, 2u);
  EXPECT_DOUBLE_EQ(points[0].gpus[0].util_sum / points[0].gpus[0].util_samples, 20.0);
  EXPECT_EQ(points[0].gpus[1].memory_used_bytes, 201u);
  EXPECT_EQ(points[1].t, 1002);
  EXPECT_EQ(points[1].calls, 1u) << "nested calls are left out";
  EXPECT_EQ(view.points(1002, 1).size(), 1u) << "only the window";
}

TEST(RollupSeries, MeansGpmActivityPerSecondAndLeavesItOutWithoutGpm) {
  RollupSeries series;
  for (double sm : {0.5, 0.7}) {
    GpuSnapshot s = gpus(1000, 10, 100);
    s.devices[0].gpm_supported = true;
    s.devices[0].gpm = GpmCounters{};
    s.devices[0].gpm->sm_active = sm;
    s.devices[0].gpm->tensor_active = sm / 2;
    series.add(s);
  }
  // The first pass of a GPM GPU has no interval yet: no reading, not a zero.
  GpuSnapshot first = gpus(1000, 10, 100);
  first.devices[0].gpm_supported = true;
  series.add(first);
  auto points = series.view().points(1000, 1);
  ASSERT_EQ(points.size(), 1u);
  const RollupGpu& g0 = points[0].gpus[0];
  EXPECT_NEAR(*g0.activity(RollupActivity::kSm), 0.6, 1e-6);
  EXPECT_NEAR(*g0.activity(RollupActivity::kTensor), 0.3, 1e-6);
  EXPECT_FALSE(g0.activity(RollupActivity::kDram)) << "not read: absent";
  EXPECT_FALSE(points[0].gpus[1].activity(RollupActivity::kSm)) << "a GPU without GPM";
}

TEST(RollupSeries, ForgetsSecondsOlderThanTheRing) {
  RollupSeries series;
  auto p = probe("cuda", "cudaMalloc");
  series.add(call(p, 10'000));
  series.add(call(p, 10'000 + RollupView::kSeconds));  // the same slot, an hour later
  series.add(call(p, 10'000));                         // too old now: dropped
  auto view = series.view();
  auto points = view.points(10'000 + RollupView::kSeconds, RollupView::kSeconds * 2);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].t, static_cast<std::int64_t>(10'000 + RollupView::kSeconds));
  EXPECT_EQ(points[0].calls, 1u);
}

TEST(RollupSeries, PublishedViewIsNotChangedByLaterWrites) {
  RollupSeries series;
  auto p = probe("cuda", "cudaMalloc");
  series.add(call(p, 5000));
  auto before = series.view();
  for (int i = 0; i < 10; ++i) series.add(call(p, 5000));
  series.add(call(p, 5001));
  auto after = series.view();
  ASSERT_EQ(before.points(5001, 10).size(), 1u);
  EXPECT_EQ(before.points(5001, 10)[0].calls, 1u);
  ASSERT_EQ(after.points(5001, 10).size(), 2u);
  EXPECT_EQ(after.points(5001, 10)[0].calls, 11u);
}

TEST(RollupSeries, ManyDomainsFoldIntoOther) {
  RollupSeries series;
  std::vector<std::shared_ptr<ProbeInfo>> probes;
  for (int i = 0; i < 40; ++i) {
    probes.push_back(probe(("d" + std::to_string(i)).c_str(), "f"));
    series.add(call(probes.back(), 7000));
  }
  auto view = series.view();
  EXPECT_EQ(view.domains().size(), RollupPoint::kMaxDomains);
  EXPECT_EQ(view.domains().back(), "other");
  auto points = view.points(7000, 1);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].domains[RollupPoint::kMaxDomains - 1], 40u - (RollupPoint::kMaxDomains - 1));
}

}  // namespace
}  // namespace eacgm::analysis
