// AnomalyDetector: planted outliers in a log-normal stream are found (with their args);
// 100k clean log-normal calls flag none; nothing is flagged during the warm-up; the
// number of tracked functions and kept anomalies is capped.
#include "analysis/anomaly_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

namespace eacgm::analysis {
namespace {

std::shared_ptr<ProbeInfo> probe(const std::string& function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.domain = "cuda";
  return p;
}

CallEvent call(const std::shared_ptr<ProbeInfo>& p, std::uint64_t dur_ns, std::uint64_t ts = 1) {
  CallEvent e;
  e.probe = p;
  e.ts_ns = ts;
  e.pid = 42;
  e.has_exit = true;
  e.dur_ns = dur_ns;
  e.nargs = 2;
  e.args[0] = 7;
  e.args[1] = 9;
  return e;
}

std::uint64_t lognormal(std::mt19937_64& rng) {
  std::lognormal_distribution<double> d(std::log(20'000.0), 0.5);
  return static_cast<std::uint64_t>(d(rng)) + 1;
}

TEST(AnomalyDetector, FindsPlantedOutliers) {
  AnomalyDetector detector;
  auto p = probe("cudaMemcpy");
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> planted_at;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    if (i > 1000 && i % 2000 == 0) {
      EXPECT_TRUE(detector.add(call(p, 50'000'000, i)));  // 2500x the median
      planted_at.push_back(i);
    } else {
      detector.add(call(p, lognormal(rng), i));
    }
  }
  const auto& s = detector.summary();
  EXPECT_EQ(s.total, planted_at.size());
  ASSERT_EQ(s.recent.size(), planted_at.size());
  EXPECT_EQ(s.recent[0].ts_ns, planted_at[0]);
  EXPECT_EQ(s.recent[0].name, "cudaMemcpy");
  EXPECT_EQ(s.recent[0].domain, "cuda");
  EXPECT_EQ(s.recent[0].pid, 42u);
  EXPECT_EQ(s.recent[0].dur_ns, 50'000'000u);
  EXPECT_GT(s.recent[0].score, 6);
  EXPECT_NEAR(s.recent[0].median_ns, 20'000, 2'000);
  EXPECT_EQ(s.recent[0].args, (std::vector<std::uint64_t>{7, 9}));
}

TEST(AnomalyDetector, CleanLogNormalStreamFlagsNone) {
  AnomalyDetector detector;
  auto p = probe("cudaLaunchKernel");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100'000; ++i) detector.add(call(p, lognormal(rng)));
  EXPECT_EQ(detector.summary().total, 0u);
  EXPECT_TRUE(detector.summary().recent.empty());
}

TEST(AnomalyDetector, WarmUpIsRespected) {
  AnomalyDetector detector;
  auto p = probe("cudaMalloc");
  for (int i = 0; i < 199; ++i) detector.add(call(p, 1000 + i % 7));
  EXPECT_FALSE(detector.add(call(p, 1'000'000'000))) << "the 200th call is still warm-up";
  EXPECT_EQ(detector.summary().total, 0u);
  for (int i = 0; i < 300; ++i) detector.add(call(p, 1000 + i % 7));
  EXPECT_TRUE(detector.add(call(p, 1'000'000'000)));
  EXPECT_EQ(detector.summary().total, 1u);
}

TEST(AnomalyDetector, NeedsTenTimesTheMedianAsWellAsTheScore) {
  AnomalyDetector detector;
  auto p = probe("cudaFree");
  // A very narrow distribution: 3x the median is a huge z-score but not an anomaly.
  for (int i = 0; i < 1000; ++i) detector.add(call(p, 10'000 + i % 3));
  EXPECT_FALSE(detector.add(call(p, 30'000)));
  EXPECT_TRUE(detector.add(call(p, 200'000)));
}

TEST(AnomalyDetector, MemoryIsBounded) {
  AnomalyDetector::Options o;
  o.max_functions = 100;
  o.keep = 5;
  o.warmup = 10;
  AnomalyDetector detector(o);
  std::vector<std::shared_ptr<ProbeInfo>> probes;
  for (int i = 0; i < 1000; ++i) {
    probes.push_back(probe("f" + std::to_string(i)));
    detector.add(call(probes.back(), 1000));
  }
  EXPECT_EQ(detector.functions(), 100u);
  EXPECT_EQ(detector.summary().functions, 100u);
  EXPECT_EQ(detector.summary().untracked_calls, 900u);
  auto p = probes[0];
  for (int i = 0; i < 100; ++i) detector.add(call(p, 1000 + i % 5));
  for (int i = 0; i < 20; ++i) {
    detector.add(call(p, 1'000'000'000));
    for (int j = 0; j < 50; ++j) detector.add(call(p, 1000 + j % 5));
  }
  EXPECT_GE(detector.summary().total, 5u);
  EXPECT_EQ(detector.summary().recent.size(), 5u);
}

TEST(AnomalyDetector, CallsWithoutDurationAreIgnored) {
  AnomalyDetector detector;
  auto p = probe("cudaGetDevice");
  CallEvent e = call(p, 0);
  EXPECT_FALSE(detector.add(e));
  EXPECT_EQ(detector.functions(), 0u);
}

}  // namespace
}  // namespace eacgm::analysis
