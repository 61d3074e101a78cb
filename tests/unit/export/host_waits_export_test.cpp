// The host-wait outputs: the `eacgm run` table, the "waits" section of `run --json`, and
// the eacgm_host_wait* families of /metrics.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>

#include "../common/cuda_probe.h"
#include "../common/host_wait_timings.h"
#include "analysis/host_waits.h"
#include "export/api_json.h"
#include "export/call_metrics.h"
#include "export/host_waits_table.h"

namespace eacgm::exporting {
namespace {

using Clock = std::chrono::steady_clock;

using test::cuda_probe;

// Process 42 ("loader", exited): 3 futex waits of 100 ms, 2 input waits of 50 ms, one
// stream sync of 20 ms (per call); process 43: sampled device syncs (always-on).
analysis::HostWaitSummary summary() {
  const auto start = Clock::now();
  analysis::HostWaits w(analysis::HostWaits::Options{}, start);
  w.set_start_of([](std::uint32_t) { return std::nullopt; });
  CallEvent sync;
  sync.probe = cuda_probe("cudaStreamSynchronize");
  sync.pid = 42;
  sync.has_exit = true;
  sync.dur_ns = 20'000'000;
  std::snprintf(sync.comm.data(), sync.comm.size(), "loader");
  w.add(sync);
  w.add(HostWaitProcess{42, "loader", 0, 0});
  w.add(test::syscall_waits(42, HostWaitKind::kFutex, 100'000'000, 3));
  w.add(test::syscall_waits(42, HostWaitKind::kInputWait, 50'000'000, 2));
  auto dev = cuda_probe("cuCtxSynchronize");
  std::vector<CallCount> counts = {CallCount{43, dev, 0, 0, "", 16, 0}};
  std::vector<CallTimings> timings = {CallTimings{43, dev, eacgm_hist_key(1'000'000), 1, 1'000'000, 0}};
  w.add(counts, timings);
  w.sweep(start + std::chrono::seconds(2), [](std::uint32_t pid) { return pid != 42; }, 10, {});
  return w.summary(start + std::chrono::seconds(4));
}

analysis::AnalysisSnapshot snapshot() {
  analysis::AnalysisSnapshot snap;
  snap.edit<analysis::HostWaitSummary>() = summary();
  return snap;
}

TEST(HostWaitsExport, TableHasARowPerProcessAndKind) {
  const std::string text = render_host_waits(summary());
  ASSERT_NE(text.find("host waits"), std::string::npos) << text;
  EXPECT_TRUE(
      std::regex_search(text, std::regex(R"(42\s+loader\s+stream_sync\s+1\s+20\.0 ms\s+1\.0%\s+20\.0 ms)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(42\s+loader\s+futex\s+3\s+300 ms\s+15\.0%.*exited)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(42\s+loader\s+input_wait\s+2\s+100 ms\s+5\.0%)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(43\s+-\s+device_sync\s+16\s+~16\.0 ms\s+0\.4%)")))
      << text;
  EXPECT_EQ(render_host_waits(analysis::HostWaitSummary{}), "");
}

TEST(HostWaitsExport, RunJsonHasAWaitsSection) {
  auto doc = nlohmann::json::parse(run_report_json(snapshot(), ApiOptions{}));
  ASSERT_TRUE(doc.contains("waits")) << doc.dump(2);
  const auto& w = doc["waits"];
  ASSERT_EQ(w["processes"].size(), 2u) << w.dump(2);
  const auto& p = w["processes"][0];
  EXPECT_EQ(p["pid"], 42);
  EXPECT_EQ(p["comm"], "loader");
  EXPECT_TRUE(p["exited"].get<bool>());
  EXPECT_EQ(p["wall_ns"], 2'000'000'000u);
  ASSERT_EQ(p["waits"].size(), 3u);
  const auto& futex = p["waits"][1];
  EXPECT_EQ(futex["kind"], "futex");
  EXPECT_EQ(futex["calls"], 3);
  EXPECT_EQ(futex["timed"], 3);
  EXPECT_EQ(futex["total_ns"], 300'000'000u);
  EXPECT_FALSE(futex["estimated"].get<bool>());
  EXPECT_DOUBLE_EQ(futex["share"].get<double>(), 0.15);
  EXPECT_NEAR(futex["p50_ns"].get<double>(), 1e8, 1e6);
  EXPECT_NEAR(futex["p99_ns"].get<double>(), 1e8, 1e6);
  EXPECT_NEAR(futex["max_ns"].get<double>(), 1e8, 1e6) << "a bucket's bound: timed in the kernel";
  const auto& sampled = w["processes"][1]["waits"][0];
  EXPECT_EQ(sampled["kind"], "device_sync");
  EXPECT_EQ(sampled["calls"], 16);
  EXPECT_EQ(sampled["timed"], 1);
  EXPECT_TRUE(sampled["estimated"].get<bool>());
  EXPECT_EQ(sampled["total_ns"], 16'000'000u);
  ASSERT_EQ(w["kinds"].size(), 4u);
  EXPECT_EQ(w["kinds"][0]["kind"], "stream_sync");
  EXPECT_EQ(w["kinds"][1]["kind"], "device_sync");
  EXPECT_EQ(w["kinds"][1]["calls"], 16);
  EXPECT_EQ(w["kinds"][1]["timed"], 1);
  EXPECT_EQ(w["untracked"], 0);
  EXPECT_EQ(w["exited_dropped"], 0);
}

TEST(HostWaitsExport, MetricsPerProcessAndKindAndAHistogramPerKind) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_call_metrics(out, snapshot(), CallMetricsOptions{});
  const std::string text = out.finish();
  EXPECT_NE(text.find("# TYPE eacgm_host_waits_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_host_waits_total{pid=\"42\",comm=\"loader\",kind=\"futex\"} 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_host_wait_seconds_total{pid=\"42\",comm=\"loader\",kind=\"futex\"} 0.3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_host_wait_seconds_total{pid=\"43\",comm=\"\",kind=\"device_sync\"} 0.016"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE eacgm_host_wait_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("eacgm_host_wait_duration_seconds_count{kind=\"futex\"} 3"), std::string::npos);
  // 100 ms waits fall in a log bucket whose representative value is just above 0.1 s.
  EXPECT_NE(text.find("eacgm_host_wait_duration_seconds_bucket{kind=\"futex\",le=\"0.25\"} 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_series_folded_total{kind=\"waits\"} 0"), std::string::npos);

  CallMetricsOptions capped;
  capped.max_process_series = 1;
  ExpositionWriter small(ExpositionFormat::kPrometheusText);
  append_call_metrics(small, snapshot(), capped);
  const std::string folded = small.finish();
  EXPECT_NE(folded.find("eacgm_series_folded_total{kind=\"waits\"} 1"), std::string::npos) << folded;
  EXPECT_NE(folded.find("eacgm_host_waits_total{pid=\"other\",comm=\"other\",kind=\"device_sync\"} 16"),
            std::string::npos)
      << folded;
  EXPECT_EQ(folded.find("pid=\"43\""), std::string::npos) << "the process with the least waiting folds";
}

}  // namespace
}  // namespace eacgm::exporting
