// The memory ledger's exports: the JSON object of /api/v1/memory and `run --json`, the
// /metrics families, and the text table of `eacgm run`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/memory_ledger.h"
#include "export/api_json.h"
#include "export/call_metrics.h"
#include "export/memory_table.h"

namespace eacgm::exporting {
namespace {

analysis::AnalysisSnapshot snapshot() {
  analysis::AnalysisSnapshot snap;
  snap.sequence = 3;
  analysis::MemoryLedgerRow running;
  running.pid = 42;
  running.comm = "train";
  running.device = 0;
  running.allocations = 2;
  running.live_allocations = 2;
  running.live_bytes = 3 << 20;
  running.peak_bytes = 5 << 20;
  running.size_histogram[20] = 1;
  running.size_histogram[21] = 1;
  running.failed_allocations = 5;
  running.failed_by_function = {{"cudaMalloc", 3}, {"cudaHostAlloc", 2}};
  analysis::MemoryLedgerRow gone;
  gone.pid = 7;
  gone.comm = "leaky";
  gone.allocations = 4;
  gone.frees = 1;
  gone.double_frees = 1;
  gone.live_bytes = 4096;
  gone.peak_bytes = 8192;
  gone.exited = true;
  gone.leak_count = 3;
  gone.leak_bytes = 4096;
  gone.largest_leaks = {{0x7f00, 2048, analysis::AllocKind::kHost, 123},
                        {0x8000, 1024, analysis::AllocKind::kVmm, 124}};
  snap.edit<analysis::MemorySummary>().rows = {running, gone};
  snap.edit<analysis::MemorySummary>().exited_dropped = 5;
  snap.edit<analysis::MemorySummary>().leaks_total = 9;
  snap.edit<analysis::MemorySummary>().leaked_bytes_total = 1 << 20;
  return snap;
}

TEST(MemoryExport, JsonHasTheDocumentedFields) {
  auto snap = snapshot();
  auto doc = nlohmann::json::parse(api_memory(snap));
  EXPECT_EQ(doc["sequence"], 3);
  EXPECT_EQ(doc["exited_dropped"], 5);
  ASSERT_EQ(doc["processes"].size(), 2u);
  const auto& p = doc["processes"][0];
  for (const char* key :
       {"pid", "comm", "device", "allocations", "frees", "live_bytes", "peak_bytes", "unknown_frees",
        "double_frees", "failed_allocations", "size_histogram", "leaks", "exited"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(p["device"], 0);
  EXPECT_EQ(p["size_histogram"],
            nlohmann::json::parse(R"([{"min_bytes":1048576,"count":1},{"min_bytes":2097152,"count":1}])"));
  EXPECT_EQ(p["leaks"], nlohmann::json::parse(R"({"count":0,"bytes":0,"largest":[]})"));
  // failed_allocations named by function, as the function rows' errors are.
  EXPECT_EQ(p["failed_allocations"], 5);
  EXPECT_EQ(p["failed_allocations_by_function"],
            nlohmann::json::parse(R"({"cudaMalloc":3,"cudaHostAlloc":2})"));
  const auto& g = doc["processes"][1];
  EXPECT_TRUE(g["exited"].get<bool>());
  EXPECT_EQ(g["device"], -1);
  EXPECT_EQ(g["leaks"]["count"], 3);
  EXPECT_EQ(g["leaks"]["largest"][0],
            nlohmann::json::parse(R"({"ptr":"0x7f00","size":2048,"kind":"host","ts_ns":123})"));
  EXPECT_EQ(g["leaks"]["largest"][1]["kind"], "vmm");

  auto report = nlohmann::json::parse(run_report_json(snap, ApiOptions{}));
  std::vector<std::string> keys;
  for (const auto& [k, v] : report.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"accounting", "anomalies", "functions", "gpu_time", "gpu_work",
                                            "gpus", "in_flight", "memory", "nccl", "ops", "overhead",
                                            "processes", "python_hot_spots", "waits"}));
  EXPECT_EQ(report["memory"]["processes"], doc["processes"]);
}

TEST(MemoryExport, MetricsCarryRunningProcessesOnly) {
  auto snap = snapshot();
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  append_call_metrics(w, snap, CallMetricsOptions{});
  const std::string text = w.finish();
  EXPECT_NE(text.find("# TYPE eacgm_process_gpu_allocated_bytes gauge"), std::string::npos) << text;
  EXPECT_NE(
      text.find("eacgm_process_gpu_allocated_bytes{pid=\"42\",comm=\"train\",cuda_device=\"0\"} 3145728"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "eacgm_process_gpu_allocated_peak_bytes{pid=\"42\",comm=\"train\",cuda_device=\"0\"} 5242880"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("pid=\"7\""), std::string::npos) << "an exited process holds nothing";
  EXPECT_NE(text.find("eacgm_series_folded_total{kind=\"memory\"} 0"), std::string::npos) << text;
  // Leaks: every exit's, without per-process series (the process is gone).
  EXPECT_NE(text.find("# TYPE eacgm_memory_leaks_total counter\neacgm_memory_leaks_total 9\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_memory_leaked_bytes_total 1048576\n"), std::string::npos) << text;

  CallMetricsOptions capped;
  capped.max_process_series = 0;
  ExpositionWriter c(ExpositionFormat::kPrometheusText);
  append_call_metrics(c, snap, capped);
  EXPECT_NE(c.finish().find("eacgm_series_folded_total{kind=\"memory\"} 1"), std::string::npos);
}

TEST(MemoryExport, TableShowsLiveAndLeaks) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(12ull << 20), "12.0 MiB");
  EXPECT_EQ(format_bytes(300ull << 30), "300 GiB");
  auto snap = snapshot();
  const std::string t = render_memory_table(snap.get<analysis::MemorySummary>());
  EXPECT_NE(t.find("running"), std::string::npos) << t;
  EXPECT_NE(t.find("exited"), std::string::npos) << t;
  EXPECT_NE(t.find("pid 7: leaked 2.00 KiB (host) at 0x7f00"), std::string::npos) << t;
  EXPECT_NE(t.find("5 earlier exited processes"), std::string::npos) << t;
  EXPECT_EQ(render_memory_table(analysis::MemorySummary{}), "");
}

}  // namespace
}  // namespace eacgm::exporting
