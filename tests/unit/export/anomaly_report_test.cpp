// The anomalies' text table and JSON: nothing when nothing was flagged; the latest rows
// with their op, ratio and args; sampled buckets say how many calls; intervals; the JSON
// fields docs/report.md lists; their totals on /metrics.
#include "export/anomaly_report.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "export/call_metrics.h"

namespace eacgm::exporting {
namespace {

analysis::AnomalySummary found() {
  analysis::AnomalySummary s;
  analysis::Anomaly a;
  a.ts_ns = 5;
  a.pid = 10;
  a.tid = 11;
  a.domain = "cuda";
  a.name = "cudaMemcpyAsync";
  a.dur_ns = 20'000'000;
  a.bytes = 4096;
  a.score = 12.5;
  a.median_ns = 20'000;
  a.args = {1, 255};
  a.op = "aten::_local_scalar_dense";
  s.recent.push_back(a);
  analysis::Anomaly b;
  b.pid = 12;
  b.domain = "cuda_driver";
  b.name = "cuLaunchKernel";
  b.dur_ns = 1'000'000;
  b.median_ns = 5'000;
  b.score = 30;
  b.sampled = true;
  b.calls = 3;
  s.recent.push_back(b);
  s.intervals.push_back({1'000'000'000, 2'000'000'000, "user", "slow_step", 0, 333, 2.9, 310.2, 1'060'000});
  s.total = 7;
  s.interval_total = 1;
  s.functions = 4;
  return s;
}

TEST(AnomalyReport, NothingFlaggedIsNoTable) { EXPECT_EQ(render_anomalies({}), ""); }

TEST(AnomalyReport, TableShowsTheLatestCallsAndIntervals) {
  const std::string text = render_anomalies(found(), 1);
  EXPECT_NE(text.find("anomalies: 7 slow call(s), 1 slow interval(s), 0 level shift(s)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("cudaMemcpyAsync"), std::string::npos) << "only the latest row fits: " << text;
  EXPECT_NE(text.find("cuda_driver:cuLaunchKernel"), std::string::npos) << text;
  EXPECT_NE(text.find("3 sampled call(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("(6 earlier slow call(s) not shown)"), std::string::npos) << text;
  EXPECT_NE(text.find("user:slow_step"), std::string::npos) << text;
  EXPECT_NE(text.find("2.9"), std::string::npos) << text;
  const std::string all = render_anomalies(found());
  EXPECT_NE(all.find("aten::_local_scalar_dense"), std::string::npos) << all;
  EXPECT_NE(all.find("0x1 0xff"), std::string::npos) << all;
  EXPECT_NE(all.find("1000"), std::string::npos) << "20 ms over a 20 us median: " << all;
}

TEST(AnomalyReport, JsonHasTheDocumentedFields) {
  const nlohmann::json j = anomalies_json(found());
  EXPECT_EQ(j.at("total"), 7);
  EXPECT_EQ(j.at("interval_total"), 1);
  EXPECT_EQ(j.at("functions"), 4);
  ASSERT_EQ(j.at("calls").size(), 2u);
  const auto& c = j.at("calls")[0];
  EXPECT_EQ(c.at("op"), "aten::_local_scalar_dense");
  EXPECT_EQ(c.at("bytes"), 4096);
  EXPECT_EQ(c.at("args"), (std::vector<std::uint64_t>{1, 255}));
  EXPECT_FALSE(c.at("sampled").get<bool>());
  EXPECT_TRUE(j.at("calls")[1].at("op").is_null());
  EXPECT_TRUE(j.at("calls")[1].at("sampled").get<bool>());
  EXPECT_EQ(j.at("calls")[1].at("calls"), 3);
  const auto& v = j.at("intervals")[0];
  EXPECT_EQ(v.at("name"), "slow_step");
  EXPECT_EQ(v.at("calls"), 333);
  EXPECT_DOUBLE_EQ(v.at("ratio").get<double>(), 2.9);
  EXPECT_EQ(v.at("end_ns"), 2'000'000'000u);
}

TEST(AnomalyReport, MetricsCountCallsAndIntervals) {
  analysis::AnalysisSnapshot snap;
  ExpositionWriter none(ExpositionFormat::kPrometheusText);
  append_call_metrics(none, snap, CallMetricsOptions{});
  EXPECT_EQ(none.finish().find("eacgm_anomalies_total"), std::string::npos) << "no detector, no family";
  snap.anomalies = std::make_shared<const analysis::AnomalySummary>(found());
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  append_call_metrics(w, snap, CallMetricsOptions{});
  const std::string text = w.finish();
  EXPECT_NE(text.find("# TYPE eacgm_anomalies_total counter\n"
                      "eacgm_anomalies_total{kind=\"call\"} 7\n"
                      "eacgm_anomalies_total{kind=\"interval\"} 1\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace eacgm::exporting
