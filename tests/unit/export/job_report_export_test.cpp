// The job report as JSON (every field, null where unknown), CSV (quoted where it must be,
// empty where unknown) and the text table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "export/job_report.h"

namespace eacgm::exporting {
namespace {

history::JobReport sample() {
  history::JobReport r;
  r.query.from_ns = 1'000'000'000;
  r.query.to_ns = 4'600'000'000'000;
  r.tier = history::Tier::kMinute;
  r.selector = {history::JobSelector::By::kNamespace, "research"};
  r.options = {0.05, 2.5, "EUR"};
  history::JobReportRow j;
  j.job = "research/nb,1";
  j.nodes = {"node-a", "node-b"};
  j.gpus = 2;
  j.gpu_hours = 4;
  j.active_gpu_hours = 1;
  j.idle_gpu_hours = 2;
  j.longest_idle_ns = 5400LL * 1'000'000'000;
  j.activity_basis = "sm_active";
  j.tensor_active_mean = 0.25;
  j.memory_peak_bytes = 8ULL << 30;
  j.memory_capacity_bytes = 80ULL << 30;
  j.energy_kwh = 1.5;
  j.energy_basis = "counter";
  j.share_basis = "sole+sm";
  j.cost = 10;
  j.idle_cost = 5;
  j.first_ns = 1'000'000'000;
  j.last_ns = 2'000'000'000;
  j.time.wall_seconds = 7200;
  j.time.processes = 2;
  j.time.host_wait_seconds = 720;
  j.time.host_waits = {{"stream_sync", 1000, 540, false}, {"blocking_copy", 20, 180, true}};
  j.time.gpu_seconds = 3600;
  j.time.gpu_timed_launches = 500;
  j.time.nccl_gpu_seconds = 900;
  j.time.nccl_timed_launches = 50;
  j.time.top_kernels = {{"gemm<float, 128>", 4000, 400, 2700}, {"ncclDevKernel_AllReduce", 100, 50, 900}};
  r.rows.push_back(j);
  history::JobReportRow none;
  none.job = "7";
  none.activity_basis = "none";
  none.energy_basis = "none";
  none.share_basis = "none";
  r.rows.push_back(none);
  return r;
}

TEST(JobReportExport, JsonHasEveryFieldAndTheWindow) {
  const auto doc = nlohmann::json::parse(job_report_json(sample()));
  EXPECT_EQ(doc["window"]["tier"], "1m");
  EXPECT_EQ(doc["selector"], nlohmann::json({{"by", "namespace"}, {"value", "research"}}));
  EXPECT_EQ(doc["gpu_hour_price"], 2.5);
  EXPECT_EQ(doc["currency"], "EUR");
  ASSERT_EQ(doc["jobs"].size(), 2u);
  const auto& j = doc["jobs"][0];
  EXPECT_EQ(j["nodes"], nlohmann::json({"node-a", "node-b"}));
  EXPECT_EQ(j["idle_share"], 0.5);
  EXPECT_EQ(j["longest_idle_s"], 5400.0);
  EXPECT_EQ(j["memory_capacity_bytes"], 80ULL << 30);
  EXPECT_EQ(j["share_basis"], "sole+sm");
  const auto& n = doc["jobs"][1];
  EXPECT_TRUE(n["idle_share"].is_null());
  EXPECT_TRUE(n["tensor_active_mean"].is_null());
  EXPECT_TRUE(n["memory_capacity_bytes"].is_null());
  const auto& t = j["time"];
  EXPECT_EQ(t["wall_s"], 7200.0);
  EXPECT_EQ(t["wall_basis"], "process_life");
  EXPECT_EQ(t["host_wait_share"], 0.1);
  EXPECT_EQ(t["host_waits"][0], nlohmann::json({{"kind", "stream_sync"},
                                                {"calls", 1000},
                                                {"seconds", 540.0},
                                                {"share", 0.075},
                                                {"estimated", false}}));
  EXPECT_EQ(t["host_waits"][1]["estimated"], true);
  EXPECT_EQ(t["gpu_time_measured"], true);
  EXPECT_EQ(t["gpu_s"], 3600.0);
  EXPECT_EQ(t["nccl_gpu_s"], 900.0);
  EXPECT_EQ(t["nccl_share"], 0.25);
  EXPECT_EQ(t["nccl_timed_launches"], 50);
  EXPECT_EQ(t["top_kernels"][0], nlohmann::json({{"name", "gemm<float, 128>"},
                                                 {"launches", 4000},
                                                 {"timed", 400},
                                                 {"gpu_s", 2700.0},
                                                 {"share", 0.75}}));
  // No GPU time measured: null, never 0.
  const auto& nt = n["time"];
  EXPECT_EQ(nt["gpu_time_measured"], false);
  EXPECT_TRUE(nt["gpu_s"].is_null());
  EXPECT_TRUE(nt["nccl_gpu_s"].is_null());
  EXPECT_TRUE(nt["nccl_share"].is_null());
  EXPECT_TRUE(nt["host_wait_share"].is_null());
  EXPECT_EQ(nt["top_kernels"], nlohmann::json::array());
  history::JobReport all = sample();
  all.selector = {};
  EXPECT_TRUE(nlohmann::json::parse(job_report_json(all))["selector"]["value"].is_null());
}

TEST(JobReportExport, CsvQuotesWhereItMustAndLeavesUnknownsEmpty) {
  const std::string csv = job_report_csv(sample());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "job,nodes,gpus,gpu_hours,active_gpu_hours,idle_gpu_hours,unmeasured_gpu_hours,idle_share,"
            "longest_idle_s,activity_basis,tensor_active_mean,memory_peak_bytes,memory_capacity_bytes,"
            "energy_kwh,energy_basis,share_basis,cost,idle_cost,currency,first_ns,last_ns,wall_s,host_wait_s,"
            "host_wait_share,host_waits,host_wait_estimated,gpu_s,gpu_timed_launches,nccl_gpu_s,nccl_share,"
            "top_kernels");
  EXPECT_NE(csv.find("\n\"research/nb,1\",node-a;node-b,2,4.000000,1.000000,2.000000,0.000000,0.5000,5400,"
                     "sm_active,0.2500,8589934592,85899345920,1.500000,counter,sole+sm,10.0000,5.0000,EUR,"
                     "1000000000,2000000000,7200.000,720.000000,0.1000,stream_sync=540.000000;"
                     "blocking_copy=180.000000,1,3600.000000,500,900.000000,0.2500,"
                     "\"gemm<float, 128>=2700.000000;ncclDevKernel_AllReduce=900.000000\"\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(
      csv.find("\n7,,0,0.000000,0.000000,0.000000,0.000000,,0,none,,0,,0.000000,none,none,0.0000,0.0000,"
               "EUR,0,0,0.000,0.000000,,,0,,,,,\n"),
      std::string::npos)
      << csv;
}

TEST(JobReportExport, TextTableWithItsFooter) {
  const std::string text = job_report_text(sample());
  EXPECT_EQ(text.rfind("JOB ", 0), 0u) << text;
  EXPECT_NE(text.find("1h30m"), std::string::npos) << text;
  EXPECT_NE(text.find("8192/81920"), std::string::npos) << text;
  EXPECT_NE(text.find("10.00 EUR"), std::string::npos) << text;
  EXPECT_NE(text.find("2 jobs from the 1m rows. Idle: a held GPU's activity under 5%. Price: 2.50 EUR per "
                      "GPU-hour.\n"),
            std::string::npos)
      << text;
  // Where the time went, per job: GPU time not measured said so, not as 0.
  for (const char* part : {"  research/nb,1: 2h00m traced over 2 processes, host waits 12m (10%): "
                           "stream_sync 9m, blocking_copy 3m "
                           "(est.)\n    GPU 1h00m (500 timed launches), NCCL 15m (25%)\n",
                           "      gemm<float, 128>  ", "  7: no traced time\n    GPU time not measured\n"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  for (std::size_t at = text.find("\nWhere"), end = 0; at < text.size(); at = end + 1) {
    end = text.find('\n', at);
    EXPECT_LE(end - at, 120u) << text.substr(at, end - at);
  }
  history::JobReport empty = sample();
  empty.rows.clear();
  EXPECT_EQ(job_report_text(empty), "no job held a GPU in this window\n");
}

}  // namespace
}  // namespace eacgm::exporting
