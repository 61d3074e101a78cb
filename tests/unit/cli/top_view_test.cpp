// `eacgm top`'s model and rendering (cli/top_view.h): rates between refreshes, sorting,
// filtering, grouping by rank, the GPU lines (utilization with SM and tensor activity)
// and the detail of the selected process.
#include "cli/top_view.h"

#include <gtest/gtest.h>

#include <string>

namespace eacgm::cli {
namespace {

const std::string kGpus =
    R"({"gpus":[{"index":0,"name":"NVIDIA H100","utilization_gpu_percent":50,"memory_used_bytes":1073741824,"memory_total_bytes":85899345920,"gpm_supported":true,"gpm":{"sm_active":0.8,"tensor_active":0.6,"dram_active":0.25}},)"
    R"({"index":1,"name":"NVIDIA A100","utilization_gpu_percent":55,"memory_used_bytes":0,"memory_total_bytes":85899345920,"gpm_supported":false,"gpm":null}]})";
const std::string kFunctions =
    R"({"functions":[{"function":"cuLaunchKernel","calls":300},{"function":"cuStreamSynchronize","calls":100}]})";
const std::string kAnomalies = R"({"anomalies":[{"pid":20,"name":"cuStreamSynchronize","dur_ns":12300000}]})";

std::string processes(std::uint64_t calls_10, std::uint64_t calls_20) {
  return R"({"processes":[{"pid":10,"comm":"trainer","calls":)" + std::to_string(calls_10) +
         R"(,"rank":1,"exited":false,"gpus":[{"gpu":0,"memory_max_bytes":2147483648}]},{"pid":20,"comm":"loader","calls":)" +
         std::to_string(calls_20) + R"(,"rank":0,"exited":false,"gpus":[]}]})";
}

TopModel two_refreshes() {
  TopModel m;
  update_top_model(m, processes(100, 100), kGpus, kFunctions, kAnomalies, 0);
  update_top_model(m, processes(300, 1100), kGpus, kFunctions, kAnomalies, 2.0);
  return m;
}

TEST(TopView, RatesComeFromTheTotalsBetweenRefreshes) {
  const TopModel m = two_refreshes();
  ASSERT_EQ(m.processes.size(), 2u);
  EXPECT_DOUBLE_EQ(m.processes[0].calls_per_s, 100.0);  // (300 - 100) / 2
  EXPECT_DOUBLE_EQ(m.processes[1].calls_per_s, 500.0);
  EXPECT_DOUBLE_EQ(m.processes[1].kernels_per_s, 375.0);  // the node's launch share, 3/4
  EXPECT_EQ(m.processes[1].anomalies, 1u);
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[0].util_history.size(), 2u);
  EXPECT_DOUBLE_EQ(*m.gpus[0].sm_active, 0.8);
  EXPECT_DOUBLE_EQ(*m.gpus[0].tensor_active, 0.6);
  EXPECT_FALSE(m.gpus[1].sm_active) << "no GPM";
}

TEST(TopView, SortsFiltersAndGroups) {
  const TopModel m = two_refreshes();
  TopViewState v;
  EXPECT_EQ(visible_processes(m, v).front().pid, 10u);  // GPU memory
  v.sort = TopSort::kCallsPerSecond;
  EXPECT_EQ(visible_processes(m, v).front().pid, 20u);
  v.sort = TopSort::kGpuMemory;
  v.group_by_rank = true;
  EXPECT_EQ(visible_processes(m, v).front().pid, 20u);  // rank 0 first
  v.group_by_rank = false;
  v.filter = "train";
  ASSERT_EQ(visible_processes(m, v).size(), 1u);
  EXPECT_EQ(visible_processes(m, v).front().pid, 10u);
  v.filter = "nothing";
  EXPECT_TRUE(visible_processes(m, v).empty());
}

TEST(TopView, RendersTheGpusTheProcessesAndTheSelection) {
  const TopModel m = two_refreshes();
  TopViewState v;
  v.sort = TopSort::kCallsPerSecond;
  const auto lines = render_top(m, v, 200, 30);
  std::string all;
  for (const auto& l : lines) {
    EXPECT_LE(l.size(), 200u);
    all += l + "\n";
  }
  EXPECT_NE(all.find("sort: calls/s"), std::string::npos) << all;
  EXPECT_NE(all.find("GPU 0 NVIDIA H100"), std::string::npos) << all;
  EXPECT_NE(all.find("50%"), std::string::npos) << all;
  // SM and tensor activity beside utilization; "-" on the GPU without GPM.
  EXPECT_NE(all.find("   50% sm  80% tensor  60% mem"), std::string::npos) << all;
  EXPECT_NE(all.find("   55% sm    - tensor    - mem"), std::string::npos) << all;
  EXPECT_NE(all.find(">     20 loader"), std::string::npos) << all;  // selected, first by calls/s
  EXPECT_NE(all.find("500.0"), std::string::npos) << all;
  EXPECT_NE(all.find("pid 20 (loader): 1100 calls, 1 slow calls, last cuStreamSynchronize 12.3 ms"),
            std::string::npos)
      << all;
  EXPECT_LE(render_top(m, v, 40, 5).size(), 5u);
  v.filter = "zzz";
  const auto none = render_top(m, v, 200, 30);
  bool said = false;
  for (const auto& l : none) said |= l == "no process matches the filter";
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace eacgm::cli
