// The NCCL outputs: bandwidth and arrival skew in /api/v1/nccl and `run --json`, the
// `eacgm run` NCCL tables, and the eacgm_nccl_* families of /metrics (the ranks' progress
// among them).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../analysis/nccl_events.h"
#include "analysis/live_analysis.h"
#include "analysis/nccl_progress.h"
#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"
#include "export/api_json.h"
#include "export/call_metrics.h"
#include "export/nccl_table.h"

namespace eacgm::exporting {
namespace {

using analysis::testing::nccl_call;
using analysis::testing::nccl_probe;

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000;

// Two ranks on communicator 0xc0: 25 AllReduces of 1 Mi float32 (4 MiB) taking 100 us
// each on the host, rank 1 starting 2 ms after rank 0; and one AllGather on a
// communicator whose creation was not seen.
analysis::AnalysisSnapshot snapshot() {
  auto allreduce = nccl_probe("ncclAllReduce");
  auto allgather = nccl_probe("ncclAllGather");
  std::vector<CallEvent> events;
  for (int k = 0; k < 25; ++k) {
    for (int r = 0; r < 2; ++r) {
      events.push_back(nccl_call(
          allreduce, {.rank = r,
                      .nranks = 2,
                      .ts_ns = kT0 + static_cast<std::uint64_t>(k) * 10 * kMs + (r == 1 ? 2 * kMs : 0),
                      .dur_ns = 100'000,
                      .count = 1u << 20}));
    }
  }
  events.push_back(nccl_call(allgather, {.comm_id = 0, .rank = -1, .nranks = -1}));
  analysis::LiveAnalysis live;
  live.on_calls(events);
  live.on_end(CounterValues{});
  return *live.snapshot();
}

TEST(NcclExport, ApiCarriesBandwidthPerCallAndSkewPerCommunicator) {
  auto doc = nlohmann::json::parse(api_nccl(snapshot()));
  ASSERT_EQ(doc["collectives"].size(), 2u) << doc.dump();
  const auto& c = doc["collectives"][0];
  EXPECT_EQ(c["function"], "ncclAllReduce");
  EXPECT_EQ(c["bandwidth_calls"], 50);
  // 4 MiB in 100 us = 41.94304 GB/s; two ranks: busbw = algbw x 2(2-1)/2.
  EXPECT_DOUBLE_EQ(c["algbw_bytes_per_s"].get<double>(), 41.94304e9);
  EXPECT_DOUBLE_EQ(c["busbw_bytes_per_s"].get<double>(), 41.94304e9);
  const auto& unknown = doc["collectives"][1];
  EXPECT_EQ(unknown["comm_id"], "0x0000000000000000");
  EXPECT_TRUE(unknown["algbw_bytes_per_s"].is_null());
  EXPECT_TRUE(unknown["busbw_bytes_per_s"].is_null());

  ASSERT_EQ(doc["communicators"].size(), 1u);
  const auto& comm = doc["communicators"][0];
  EXPECT_EQ(comm["comm_id"], "0x00000000000000c0");
  EXPECT_EQ(comm["nranks"], 2);
  EXPECT_EQ(comm["local_ranks"], 2);
  EXPECT_EQ(comm["instances"], 25);
  EXPECT_EQ(comm["incomplete"], 0);
  EXPECT_EQ(comm["pending"], 0);
  EXPECT_EQ(comm["skew_max_ns"], 2 * kMs);
  EXPECT_NEAR(comm["skew_p50_ns"].get<double>(), 2.0 * kMs, 0.02 * kMs);
  EXPECT_EQ(comm["straggler"], 1);
  ASSERT_EQ(comm["ranks"].size(), 2u);
  EXPECT_EQ(comm["ranks"][1], nlohmann::json::parse(R"({"rank":1,"pid":1001,"instances":25,"last":25,
                                                          "mean_lateness_ns":2000000.0,"straggler":true})"));
  EXPECT_EQ(comm["ranks"][0]["last"], 0);
  EXPECT_EQ(doc["untracked_calls"], 0);

  auto report = nlohmann::json::parse(run_report_json(snapshot(), ApiOptions{}));
  EXPECT_EQ(report["nccl"]["communicators"], doc["communicators"]);
}

TEST(NcclExport, RunTablesShowBandwidthAndTheStraggler) {
  auto snap = snapshot();
  const std::string text =
      render_nccl_table(snap.get<analysis::NcclStats>(), snap.get<analysis::NcclSkewSummary>());
  EXPECT_NE(text.find("0x00000000000000c0  ncclAllReduce"), std::string::npos) << text;
  EXPECT_NE(text.find("41.9 GB/s  41.9 GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown             ncclAllGather"), std::string::npos) << text;
  EXPECT_NE(text.find("nccl arrival skew"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1 (pid 1001): last in 25 of 25, 2.00 ms late on average  <- straggler"),
            std::string::npos)
      << text;
  EXPECT_EQ(render_nccl_table(analysis::NcclStats{}, analysis::NcclSkewSummary{}), "");
  EXPECT_EQ(format_bandwidth(std::nullopt), "-");
  EXPECT_EQ(format_bandwidth(1.234e9), "1.23 GB/s");
  EXPECT_EQ(format_bandwidth(123.4e9), "123 GB/s");
}

TEST(NcclExport, MetricsCarryBandwidthSkewAndTheStraggler) {
  auto snap = snapshot();
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_call_metrics(out, snap, CallMetricsOptions{});
  const std::string text = out.finish();
  auto has = [&](const std::string& line) { return text.find(line) != std::string::npos; };
  EXPECT_TRUE(
      has("eacgm_nccl_algorithm_bandwidth_bytes_per_second{comm_id=\"0x00000000000000c0\","
          "function=\"ncclAllReduce\"} 41943040000"))
      << text;
  EXPECT_TRUE(
      has("eacgm_nccl_bus_bandwidth_bytes_per_second{comm_id=\"0x00000000000000c0\","
          "function=\"ncclAllReduce\"} 41943040000"));
  // No size for the AllGather of an unknown communicator: no series.
  EXPECT_FALSE(has("bandwidth_bytes_per_second{comm_id=\"0x0000000000000000\""));
  EXPECT_TRUE(has("eacgm_nccl_collective_instances_total{comm_id=\"0x00000000000000c0\"} 25"));
  EXPECT_TRUE(has("eacgm_nccl_incomplete_instances_total{comm_id=\"0x00000000000000c0\"} 0"));
  EXPECT_TRUE(has("eacgm_nccl_skew_seconds_bucket{comm_id=\"0x00000000000000c0\",le=\"0.0025\"} 25"));
  EXPECT_TRUE(has("eacgm_nccl_skew_seconds_count{comm_id=\"0x00000000000000c0\"} 25"));
  EXPECT_TRUE(
      has("eacgm_nccl_last_arrivals_total{comm_id=\"0x00000000000000c0\",nccl_rank=\"1\",pid=\"1001\"} 25"));
  EXPECT_TRUE(
      has("eacgm_nccl_lateness_seconds_total{comm_id=\"0x00000000000000c0\",nccl_rank=\"1\",pid=\"1001\"} "
          "0.05"));
  EXPECT_TRUE(has("eacgm_nccl_straggler{comm_id=\"0x00000000000000c0\",nccl_rank=\"1\",pid=\"1001\"} 1"));
  EXPECT_TRUE(has("eacgm_nccl_straggler{comm_id=\"0x00000000000000c0\",nccl_rank=\"0\",pid=\"1000\"} 0"));
  EXPECT_TRUE(has("eacgm_series_folded_total{kind=\"nccl\"} 0"));

  CallMetricsOptions capped;
  capped.max_function_series = 1;
  ExpositionWriter small(ExpositionFormat::kPrometheusText);
  append_call_metrics(small, snap, capped);
  EXPECT_NE(small.finish().find("eacgm_series_folded_total{kind=\"nccl\"} 1"), std::string::npos);
}

// Two ranks of a communicator of 16 (rank 9 one collective behind, rank 8 waiting in
// #18204 for 94 s), and one rank of a communicator whose size is not known.
TEST(NcclExport, MetricsCarryEachRanksProgressAndTheCommunicatorsSize) {
  analysis::AnalysisSnapshot snap;
  auto& comms = snap.edit<analysis::NcclProgressSummary>().comms;
  comms.push_back(
      {0xab, 16, {{8, 4243, 18204, 18204, 94'500'000'000, {}, {}}, {9, 4244, 18203, 18203, 0, {}, {}}}});
  comms.push_back({0xcd, -1, {{0, 4245, 1, 0, 2'000'000'000, {}, {}}}});
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_call_metrics(out, snap, CallMetricsOptions{});
  const std::string text = out.finish();
  auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  const std::string r8 = R"({comm_id="0x00000000000000ab",nccl_rank="8",nranks="16",pid="4243"})";
  const std::string r9 = R"({comm_id="0x00000000000000ab",nccl_rank="9",nranks="16",pid="4244"})";
  const std::string unsized = R"({comm_id="0x00000000000000cd",nccl_rank="0",pid="4245"})";
  EXPECT_TRUE(has("eacgm_nccl_rank_collective_entered" + r8 + " 18204")) << text;
  EXPECT_TRUE(has("eacgm_nccl_rank_collective_entered" + r9 + " 18203"));
  EXPECT_TRUE(has("eacgm_nccl_rank_collective_entered" + unsized + " 1"));
  EXPECT_TRUE(has("eacgm_nccl_rank_collective_finished" + r8 + " 18204"));
  EXPECT_TRUE(has("eacgm_nccl_rank_collective_finished" + unsized + " 0"));
  EXPECT_TRUE(has("eacgm_nccl_rank_waiting_seconds" + r8 + " 94.5"));
  EXPECT_TRUE(has("eacgm_nccl_rank_waiting_seconds" + r9 + " 0"));
  EXPECT_TRUE(has(R"(eacgm_nccl_communicator_ranks{comm_id="0x00000000000000ab"} 16)"));
  EXPECT_EQ(text.find(R"(eacgm_nccl_communicator_ranks{comm_id="0x00000000000000cd"})"), std::string::npos);
  EXPECT_TRUE(has("# TYPE eacgm_nccl_rank_collective_entered gauge"));

  // Communicators are capped as the other NCCL series: the first ones kept, the others counted.
  CallMetricsOptions capped;
  capped.max_function_series = 1;
  ExpositionWriter small(ExpositionFormat::kPrometheusText);
  append_call_metrics(small, snap, capped);
  const std::string few = small.finish();
  EXPECT_NE(few.find("eacgm_nccl_rank_collective_entered" + r9), std::string::npos);
  EXPECT_EQ(few.find("eacgm_nccl_rank_collective_entered" + unsized), std::string::npos);
  EXPECT_NE(few.find("eacgm_series_folded_total{kind=\"nccl\"} 1"), std::string::npos) << few;
}

}  // namespace
}  // namespace eacgm::exporting
