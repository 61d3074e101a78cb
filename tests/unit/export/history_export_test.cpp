// The history's documents and table show a process's workload: every field in the JSON
// (null when unknown), and the pod and job columns of the text table only when some
// process has one. GPU time rows get a table of their own. Lists are pages: the JSON says
// the window's total and the next page's cursor, the text how many rows more. Anomalies
// read as what they are: no ratio to a median that is unknown, a hang as its length.
// GPUs show GPM's activities beside utilization.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "export/history_json.h"
#include "export/history_tables.h"
#include "history/history_window.h"

namespace eacgm::exporting {
namespace {

history::StoredProcess process(std::uint32_t pid) {
  history::StoredProcess p;
  p.node = "node-a";
  p.record.key = {pid, 1000};
  p.record.comm = "train";
  p.record.first_ns = 1'793'491'200'000'000'000;
  p.record.last_ns = p.record.first_ns + 10'000'000'000;
  p.calls = 5;
  return p;
}

history::StoredProcess in_pod(std::uint32_t pid) {
  history::StoredProcess p = process(pid);
  p.record.container = "c0ffee";
  p.record.pod_uid = "5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0";
  p.record.pod = "trainer-0";
  p.record.namespace_ = "ml";
  p.record.container_name = "pytorch";
  p.record.job = "4242";
  p.record.job_step = "1";
  return p;
}

history::ProcessPage page_of(std::vector<history::StoredProcess> rows) {
  history::ProcessPage page;
  page.totals.processes = rows.size();
  page.rows = std::move(rows);
  return page;
}

history::HistoryQuery window() {
  history::HistoryQuery q;
  q.from_ns = 1'793'491'200'000'000'000;
  q.to_ns = q.from_ns + 60'000'000'000;
  return q;
}

TEST(HistoryExport, ProcessesJsonCarriesEveryWorkloadField) {
  const auto doc = nlohmann::json::parse(
      history_processes_json(window(), history::Tier::kRaw, page_of({in_pod(7), process(8)})));
  const auto& p = doc["processes"][0];
  EXPECT_EQ(p["container_id"], "c0ffee");
  EXPECT_EQ(p["pod_uid"], "5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0");
  EXPECT_EQ(p["pod"], "trainer-0");
  EXPECT_EQ(p["namespace"], "ml");
  EXPECT_EQ(p["container"], "pytorch");  // the name, as /api/v1/processes has it
  EXPECT_EQ(p["job"], "4242");
  EXPECT_EQ(p["job_step"], "1");
  const auto& none = doc["processes"][1];
  for (const char* key : {"container_id", "pod_uid", "pod", "namespace", "container", "job", "job_step"})
    EXPECT_TRUE(none[key].is_null()) << key;
}

TEST(HistoryExport, TextTableHasPodAndJobColumnsOnlyWhenSomeProcessHasThem) {
  HistoryReport plain;
  plain.query = window();
  plain.processes = page_of({process(8)});
  const std::string without = render_history_text(plain);
  EXPECT_EQ(without.find(" pod"), std::string::npos) << without;
  EXPECT_EQ(without.find(" job"), std::string::npos) << without;

  HistoryReport pods = plain;
  pods.processes = page_of({in_pod(7), process(8)});
  const std::string with = render_history_text(pods);
  EXPECT_NE(with.find(" pod "), std::string::npos) << with;
  EXPECT_NE(with.find(" job"), std::string::npos) << with;
  EXPECT_NE(with.find("ml/trainer-0"), std::string::npos) << with;
  EXPECT_NE(with.find("4242.1"), std::string::npos) << with;
}

history::StoredAnomaly anomaly(const char* kind, double value, double median_ns) {
  history::StoredAnomaly a;
  a.node = "node-a";
  a.record.t_ns = 1'793'491'200'000'000'000;
  a.record.end_ns = a.record.t_ns + 1'030'000'000;
  a.record.process.pid = 7;
  a.record.kind = kind;
  a.record.domain = "cuda";
  a.record.function = "cudaStreamSynchronize";
  a.record.value = value;
  a.record.median_ns = median_ns;
  return a;
}

// Every kind carries a value in ns beside its median and their quotient: a slow
// interval's is its calls' duration (the store keeps its ratio), a hang's its length with
// no median, never read as a ratio ("3757889121.0x the median").
TEST(HistoryExport, AnomaliesHaveAValueInTheMediansUnitAndTheirRatio) {
  HistoryReport r;
  r.query = window();
  r.processes = page_of({process(7)});  // a window with nothing kept has no anomaly list either
  r.anomalies.rows = {anomaly("call", 24'000, 1'200), anomaly("interval", 2.4, 1'200),
                      anomaly("hang", 3'757'889'121, 0)};
  r.anomalies.total = r.anomalies.rows.size();
  const auto doc = nlohmann::json::parse(history_report_json(r));
  const auto& rows = doc["anomalies"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0]["dur_ns"].get<double>(), 24'000);
  EXPECT_DOUBLE_EQ(rows[0]["ratio"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(rows[1]["dur_ns"].get<double>(), 2'880);
  EXPECT_DOUBLE_EQ(rows[1]["ratio"].get<double>(), 2.4);
  EXPECT_DOUBLE_EQ(rows[1]["median_ns"].get<double>(), 1'200);
  EXPECT_DOUBLE_EQ(rows[2]["dur_ns"].get<double>(), 3'757'889'121);
  EXPECT_TRUE(rows[2]["ratio"].is_null());
  const std::string text = render_history_text(r);
  EXPECT_EQ(text.find("3757889121"), std::string::npos) << text;
  EXPECT_NE(text.find("slow interval, 2.88 us per call, 2.4x the median 1.20 us"), std::string::npos) << text;
  EXPECT_NE(text.find("hang for 3.76 s"), std::string::npos) << text;
}

TEST(HistoryExport, GpuTimeRowsHaveTheirOwnTable) {
  HistoryReport r;
  r.query = window();
  r.processes = page_of({process(8)});
  history::StoredFunction call;
  call.domain = "cuda";
  call.function = "cudaMemcpy";
  call.calls = 5;
  history::StoredFunction gpu;
  gpu.domain = history::kGpuTimeDomain;
  gpu.function = "gemm_kernel";
  gpu.calls = 400;
  r.functions = {call, gpu};
  const std::string text = render_history_text(r);
  const auto table = text.find("gpu time (CUDA events through the hook");
  ASSERT_NE(table, std::string::npos) << text;
  EXPECT_LT(text.find("cudaMemcpy"), table) << text;
  EXPECT_GT(text.find("gemm_kernel"), table) << text;

  r.functions = {call};
  EXPECT_EQ(render_history_text(r).find("gpu time"), std::string::npos);
}

// GPM's activities show beside utilization: ratios in the JSON (null without GPM), means
// in percent in the text table ("-" without GPM).
TEST(HistoryExport, GpusCarryGpmActivitiesBesideUtilization) {
  HistoryReport r;
  r.query = window();
  r.processes = page_of({process(9)});
  // Node, GPU, UUID, name, step, utilization mean and max, memory, power and temperature
  // (unknown), SM, tensor and DRAM activity mean and max.
  const history::StoredGpuPoint busy{"node-a", 0,  "", "H200", 0,    100.0, 100,  {},   {}, {},
                                     {},       {}, {}, 0.97,   0.99, 0.94,  0.95, 0.17, 0.2};
  const history::StoredGpuPoint plain{"node-a", 1,  "", "T4", 0,  30.0, {}, {}, {}, {},
                                      {},       {}, {}, {},   {}, {},   {}, {}, {}};
  r.gpus = {busy, plain};
  const auto doc = nlohmann::json::parse(history_report_json(r));
  ASSERT_EQ(doc["gpus"].size(), 2u);
  EXPECT_DOUBLE_EQ(doc["gpus"][0]["sm_active_mean"].get<double>(), 0.97);
  EXPECT_DOUBLE_EQ(doc["gpus"][0]["tensor_active_max"].get<double>(), 0.95);
  EXPECT_DOUBLE_EQ(doc["gpus"][0]["dram_active_mean"].get<double>(), 0.17);
  EXPECT_DOUBLE_EQ(doc["gpus"][0]["utilization_mean_percent"].get<double>(), 100.0);
  EXPECT_TRUE(doc["gpus"][1]["sm_active_mean"].is_null());
  EXPECT_TRUE(doc["gpus"][1]["dram_active_max"].is_null());
  const std::string text = render_history_text(r);
  EXPECT_NE(text.find("util mean util max sm mean tensor mean dram mean"), std::string::npos) << text;
  EXPECT_NE(text.find("100.0%     100%   97.0%       94.0%     17.0%"), std::string::npos) << text;
  EXPECT_NE(text.find(" 30.0%       0%       -           -         -"), std::string::npos) << text;
}

TEST(HistoryExport, AListIsAPageWithTheWindowsTotalAndTheNextPagesCursor) {
  history::HistoryQuery q = window();
  q.limit = 2;
  history::ProcessPage page = page_of({process(7), process(8)});
  page.totals = {5, 1, 900, 3};
  auto doc = nlohmann::json::parse(history_processes_json(q, history::Tier::kRaw, page));
  EXPECT_EQ(doc["total"], 5);
  EXPECT_EQ(doc["totals"]["running"], 1);
  EXPECT_EQ(doc["totals"]["calls"], 900);
  EXPECT_EQ(doc["totals"]["errors"], 3);
  EXPECT_EQ(doc["processes"].size(), 2u);
  ASSERT_TRUE(doc["next"].is_string()) << doc.dump();
  history::HistoryQuery next;
  ASSERT_TRUE(history::apply_cursor(doc["next"], next));
  EXPECT_EQ(next.offset, 2u);
  EXPECT_EQ(next.from_ns, q.from_ns);  // the first page's window, however time moved
  EXPECT_EQ(next.to_ns, q.to_ns);
  q.offset = 3;  // the last page
  doc = nlohmann::json::parse(history_processes_json(q, history::Tier::kRaw, page));
  EXPECT_TRUE(doc["next"].is_null()) << doc.dump();
}

TEST(HistoryExport, TextSaysHowManyRowsMoreEachListHas) {
  HistoryReport r;
  r.query = window();
  r.processes = page_of({process(7), process(8)});
  r.processes.totals = {50, 4, 250, 0};
  r.anomalies.total = 31;
  history::StoredAnomaly slow;
  slow.record = {
      r.query.from_ns, r.query.from_ns + 5'000'000, {7, 1000}, "call", "cuda", "cudaMemcpy", 9.5, 5'000'000,
      200'000};
  r.anomalies.rows = {slow};
  const std::string text = render_history_text(r);
  EXPECT_NE(text.find("50 processes in this window (4 running), 250 calls, 0 errors"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(48 more processes in this window: --limit N or --all)"), std::string::npos) << text;
  EXPECT_NE(text.find("anomalies (31):"), std::string::npos) << text;
  EXPECT_NE(text.find("(30 more anomalies in this window"), std::string::npos) << text;
}

TEST(HistoryExport, AnomaliesShowNoRatioToAnUnknownMedian) {
  HistoryReport r;
  r.query = window();
  r.processes = page_of({process(8)});
  const std::int64_t t = r.query.from_ns;
  auto anomaly = [](history::AnomalyRecord a) {
    history::StoredAnomaly s;
    s.record = std::move(a);
    return s;
  };
  // A hang's value is its length in ns, its median none.
  r.anomalies.rows = {
      anomaly({t, t + 3'757'889'121, {8, 1000}, "hang", "nccl", "ncclAllReduce", 3, 3'757'889'121, 0}),
      anomaly({t, t + 10'000'000'000, {}, "interval", "cuda", "cudaMemcpy", 4.1, 2.4, 1200}),
      anomaly({t, t + 10'000'000'000, {}, "interval", "cuda", "cudaFree", 3.2, 7.5, 0}),
      anomaly({t, t + 1'030'000'000, {8, 1000}, "call", "cuda", "cudaMalloc", 9, 1.03e9, 0})};
  r.anomalies.total = r.anomalies.rows.size();
  const std::string text = render_history_text(r);
  EXPECT_EQ(text.find("3757889121"), std::string::npos) << text;
  EXPECT_NE(text.find("pid 8 nccl ncclAllReduce: hang for 3.76 s"), std::string::npos) << text;
  EXPECT_NE(text.find("cuda cudaMemcpy: slow interval, 2.88 us per call, 2.4x the median 1.20 us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cuda cudaFree: slow interval (score 3.2)"), std::string::npos) << text;
  EXPECT_NE(text.find("cudaMalloc: 1.03 s (median unknown)"), std::string::npos) << text;
}

}  // namespace
}  // namespace eacgm::exporting
