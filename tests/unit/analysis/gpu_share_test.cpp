// A shared GPU's utilisation divided among its workloads: by NVML's per-process samples
// when there are some, else by traced launches, else evenly; the shares always sum to
// the GPU's utilisation.
#include "analysis/gpu_share.h"

#include <gtest/gtest.h>

namespace eacgm::analysis {
namespace {

double sum_of(const std::vector<GpuShare>& rows, unsigned gpu) {
  double s = 0;
  for (const auto& r : rows) {
    if (r.gpu == gpu) s += r.percent;
  }
  return s;
}

TEST(GpuShare, NvmlSamplesWinAndSharesSumToTheGpusUtilisation) {
  GpuShareInput g{0, 80.0, {{1, "ml/a", 30, 1000}, {2, "ml/a", 10, 0}, {3, "ml/b", 40, 5}}};
  const auto rows = gpu_shares({g});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].workload, "ml/a");
  EXPECT_DOUBLE_EQ(rows[0].percent, 40.0);  // 80 * 40/80
  EXPECT_DOUBLE_EQ(rows[1].percent, 40.0);
  EXPECT_STREQ(rows[0].basis, "nvml");
  EXPECT_DOUBLE_EQ(sum_of(rows, 0), 80.0);
}

TEST(GpuShare, LaunchesWhenNvmlHasNoPerProcessFigures) {
  GpuShareInput g{1, 60.0, {{1, "ml/a", std::nullopt, 300}, {2, "", 0, 100}}};
  const auto rows = gpu_shares({g});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].workload, "");  // the processes in no pod
  EXPECT_DOUBLE_EQ(rows[0].percent, 15.0);
  EXPECT_DOUBLE_EQ(rows[1].percent, 45.0);
  EXPECT_STREQ(rows[1].basis, "launches");
}

TEST(GpuShare, EvenlyWithoutEitherAndNothingWithoutUtilisation) {
  GpuShareInput g{2, 30.0, {{1, "a", std::nullopt, 0}, {2, "b", std::nullopt, 0}, {3, "b", std::nullopt, 0}}};
  const auto rows =
      gpu_shares({g, GpuShareInput{3, std::nullopt, {{4, "c", 50, 9}}}, GpuShareInput{4, 50.0, {}}});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_DOUBLE_EQ(rows[0].percent, 10.0);
  EXPECT_DOUBLE_EQ(rows[1].percent, 20.0);
  EXPECT_STREQ(rows[0].basis, "even");
  EXPECT_DOUBLE_EQ(sum_of(rows, 2), 30.0);
}

}  // namespace
}  // namespace eacgm::analysis
