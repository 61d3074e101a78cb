// The GPU side of the NCCL outputs and the GPU-time families of /metrics: NCCL kernels the
// hook timed, through LiveAnalysis (which joins them to their calls), into /api/v1/nccl's
// `gpu`, the `nccl on the GPU` table of `eacgm run`, and eacgm_nccl_gpu_* and
// eacgm_gpu_time_* on /metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../analysis/nccl_events.h"
#include "analysis/live_analysis.h"
#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"
#include "core/clock.h"
#include "export/api_json.h"
#include "export/call_metrics.h"
#include "export/nccl_table.h"

namespace eacgm::exporting {
namespace {

using analysis::testing::nccl_call;
using analysis::testing::nccl_probe;

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kFunction = 0xf00;
const char* const kKernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

// Two ranks on communicator 0xc0, 25 AllReduces of 4 MiB each, 100 us on the host; the
// hook timed each call's kernel 50 us into the call: 80 us on the GPU, queued.
analysis::AnalysisSnapshot snapshot() {
  auto allreduce = nccl_probe("ncclAllReduce");
  const WallClock wall;
  const std::uint64_t t0 = wall.from_monotonic(monotonic_ns()) - 10'000 * kMs;
  std::vector<CallEvent> events;
  GpuTimeBatch batch;
  for (std::uint32_t r = 0; r < 2; ++r) {
    batch.names.push_back({.pid = 1000 + r, .function = kFunction, .name = kKernel, .nccl = true});
    batch.counts.push_back({.pid = 1000 + r, .function = kFunction, .launches = 25});
  }
  for (int k = 0; k < 25; ++k) {
    for (int r = 0; r < 2; ++r) {
      const std::uint64_t ts =
          t0 + static_cast<std::uint64_t>(k) * 10 * kMs + static_cast<std::uint64_t>(r) * kMs;
      events.push_back(
          nccl_call(allreduce, {.rank = r, .nranks = 2, .ts_ns = ts, .dur_ns = 100'000, .count = 1u << 20}));
      GpuSpan s;
      s.pid = s.tid = 1000 + static_cast<std::uint32_t>(r);
      s.function = kFunction;
      s.stream = 0x50;
      s.launch_ns = ts + 50'000 - wall.offset_ns();
      s.start_ns = s.launch_ns + 10'000;
      s.duration_ns = 80'000;
      s.nccl = true;
      s.queued = true;
      batch.spans.push_back(s);
    }
  }
  analysis::LiveAnalysis live;
  live.on_gpu_time(batch);  // before the calls: the kernels wait for them
  live.on_calls(events);
  live.on_end(CounterValues{});
  return *live.snapshot();
}

TEST(NcclGpuExport, ApiCarriesTheBandwidthOverGpuTimeBesideTheHosts) {
  auto doc = nlohmann::json::parse(api_nccl(snapshot()));
  ASSERT_EQ(doc["collectives"].size(), 1u) << doc.dump();
  const auto& c = doc["collectives"][0];
  // Host: 4 MiB in 100 us; GPU: in 80 us = 52.4288 GB/s (busbw x 2(2-1)/2 = the same).
  EXPECT_DOUBLE_EQ(c["algbw_bytes_per_s"].get<double>(), 41.94304e9);
  const auto& g = c["gpu"];
  ASSERT_TRUE(g.is_object()) << c.dump();
  EXPECT_EQ(g["calls"], 50);
  EXPECT_EQ(g["kernels"], 50);
  EXPECT_EQ(g["idle_starts"], 0);
  EXPECT_EQ(g["gpu_ns"], 50 * 80'000);
  EXPECT_DOUBLE_EQ(g["algbw_bytes_per_s"].get<double>(), 52.4288e9);
  EXPECT_DOUBLE_EQ(g["busbw_bytes_per_s"].get<double>(), 52.4288e9);
  ASSERT_EQ(g["sizes"].size(), 1u);
  EXPECT_EQ(g["sizes"][0]["min_bytes"], 4u << 20);
  EXPECT_EQ(g["sizes"][0]["max_bytes"], 4u << 20);
  EXPECT_EQ(g["sizes"][0]["calls"], 50);
  EXPECT_EQ(doc["gpu_unjoined"], 0);
}

TEST(NcclGpuExport, RunTableShowsEachSizeAndTheTotal) {
  auto snap = snapshot();
  const std::string text =
      render_nccl_table(snap.get<analysis::NcclStats>(), snap.get<analysis::NcclSkewSummary>());
  EXPECT_NE(text.find("nccl on the GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("4.00 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("52.4 GB/s  52.4 GB/s"), std::string::npos) << text;
}

TEST(NcclGpuExport, MetricsCarryGpuBandwidthAndTheKernelsGpuTime) {
  auto snap = snapshot();
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_call_metrics(out, snap, CallMetricsOptions{});
  const std::string text = out.finish();
  auto has = [&](const std::string& line) { return text.find(line) != std::string::npos; };
  const std::string call = "{comm_id=\"0x00000000000000c0\",function=\"ncclAllReduce\"}";
  EXPECT_TRUE(has("eacgm_nccl_gpu_algorithm_bandwidth_bytes_per_second" + call + " 52428800000")) << text;
  EXPECT_TRUE(has("eacgm_nccl_gpu_bus_bandwidth_bytes_per_second" + call + " 52428800000"));
  EXPECT_TRUE(has("eacgm_nccl_gpu_seconds_total" + call + " 0.004"));
  const std::string kernel = std::string("{kernel=\"") + kKernel + "\"}";
  EXPECT_TRUE(has("eacgm_gpu_time_launches_total" + kernel + " 50"));
  EXPECT_TRUE(has("eacgm_gpu_time_kernel_duration_seconds_count" + kernel + " 50"));
  EXPECT_TRUE(has(std::string("eacgm_gpu_time_kernel_duration_seconds_bucket{kernel=\"") + kKernel +
                  "\",le=\"0.0001\"} 50"));
  EXPECT_TRUE(has("eacgm_gpu_time_kernel_estimated_seconds" + kernel + " 0.004"));
}

}  // namespace
}  // namespace eacgm::exporting
