// The anomalies' text table and JSON: nothing when nothing was flagged; the latest rows
// with their op, ratio and args; sampled buckets say how many calls; intervals; the JSON
// fields docs/report.md lists; their totals on /metrics.
#include "export/anomaly_report.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/anomaly_detector.h"
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
  a.comm = "python3";
  auto probe = std::make_shared<ProbeInfo>();
  probe->function = "cudaMemcpyAsync";
  probe->spec.name = "cudaMemcpyAsync";
  probe->spec.domain = "cuda";
  probe->spec.args = {ArgSpec{"dst", ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kHex},
                      ArgSpec{"count", ArgSource::kRegister, 1, ArgKind::kRaw, ArgFormat::kUnsigned}};
  auto call = std::make_shared<CallEvent>();
  call->probe = probe;
  call->nargs = 2;
  call->args[0] = 1;
  call->args[1] = 255;
  a.call = call;
  a.op = "aten::_local_scalar_dense";
  a.repeats = 3;  // two more flagged calls merged into it, the last 1.5 s later
  a.calls = 3;
  a.last_ts_ns = 5 + 1'500'000'000;
  a.max_dur_ns = 30'000'000;
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
  s.intervals.push_back(
      {1'000'000'000, 2'000'000'000, "user", "slow_step", 0, 333, 3'074'000, 1'060'000, 2.9, 310.2});
  s.total = 9;
  s.interval_total = 1;
  s.functions = 4;
  return s;
}

TEST(AnomalyReport, NothingFlaggedIsNoTable) { EXPECT_EQ(render_anomalies({}), ""); }

TEST(AnomalyReport, TableShowsTheLatestCallsAndIntervals) {
  const std::string text = render_anomalies(found(), 1);
  EXPECT_NE(text.find("anomalies: 9 slow call(s), 1 slow interval(s), 0 level shift(s)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("cudaMemcpyAsync"), std::string::npos) << "only the latest row fits: " << text;
  EXPECT_NE(text.find("cuda_driver:cuLaunchKernel"), std::string::npos) << text;
  EXPECT_NE(text.find("3 sampled call(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("(8 earlier slow call(s) not shown)"), std::string::npos) << text;
  EXPECT_NE(text.find("user:slow_step"), std::string::npos) << text;
  EXPECT_NE(text.find("2.9"), std::string::npos) << text;
  const std::string all = render_anomalies(found());
  EXPECT_NE(all.find("aten::_local_scalar_dense"), std::string::npos) << all;
  EXPECT_NE(all.find("0x1 0xff"), std::string::npos) << all;
  EXPECT_NE(all.find("1000"), std::string::npos) << "20 ms over a 20 us median: " << all;
  EXPECT_NE(all.find("3 in 1.50 s"), std::string::npos) << "its repeats: " << all;
  EXPECT_NE(all.find("(5 earlier slow call(s) not shown)"), std::string::npos) << "9 less 3 + 1: " << all;
}

TEST(AnomalyReport, JsonHasTheDocumentedFields) {
  const nlohmann::json j = anomalies_json(found());
  EXPECT_EQ(j.at("total"), 9);
  EXPECT_EQ(j.at("interval_total"), 1);
  EXPECT_EQ(j.at("functions"), 4);
  ASSERT_EQ(j.at("calls").size(), 2u);
  const auto& c = j.at("calls")[0];
  EXPECT_EQ(c.at("op"), "aten::_local_scalar_dense");
  EXPECT_EQ(c.at("bytes"), 4096);
  EXPECT_EQ(c.at("comm"), "python3");
  EXPECT_EQ(c.at("args"), (nlohmann::json{{"dst", "0x1"}, {"count", 255}}))
      << "named, as the events write them";
  EXPECT_EQ(j.at("calls")[1].at("args"), nlohmann::json::object()) << "a sampled bucket has no call";
  EXPECT_FALSE(c.at("sampled").get<bool>());
  EXPECT_TRUE(j.at("calls")[1].at("op").is_null());
  EXPECT_TRUE(j.at("calls")[1].at("sampled").get<bool>());
  EXPECT_EQ(j.at("calls")[1].at("calls"), 3);
  EXPECT_EQ(c.at("repeats"), 3);
  EXPECT_EQ(c.at("last_ts_ns"), 1'500'000'005u);
  EXPECT_EQ(c.at("max_dur_ns"), 30'000'000u);
  EXPECT_EQ(j.at("calls")[1].at("repeats"), 1);
  const auto& v = j.at("intervals")[0];
  EXPECT_EQ(v.at("name"), "slow_step");
  EXPECT_EQ(v.at("calls"), 333);
  EXPECT_DOUBLE_EQ(v.at("ratio").get<double>(), 2.9);
  EXPECT_EQ(v.at("end_ns"), 2'000'000'000u);
  // The value beside the median is the calls' duration, in the median's unit (not the
  // interval's 1 s), and the ratio is their quotient.
  EXPECT_EQ(v.at("dur_ns"), 3'074'000u);
  EXPECT_NEAR(v.at("dur_ns").get<double>() / v.at("median_ns").get<double>(), v.at("ratio").get<double>(),
              1e-9);
}

TEST(AnomalyReport, MetricsCountCallsAndIntervals) {
  analysis::AnalysisSnapshot snap;
  ExpositionWriter none(ExpositionFormat::kPrometheusText);
  append_call_metrics(none, snap, CallMetricsOptions{});
  EXPECT_EQ(none.finish().find("eacgm_anomalies_total"), std::string::npos) << "no detector, no family";
  snap.parts.put<analysis::AnomalySummary>(std::make_shared<const analysis::AnomalySummary>(found()));
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  append_call_metrics(w, snap, CallMetricsOptions{});
  const std::string text = w.finish();
  EXPECT_NE(text.find("# TYPE eacgm_anomalies_total counter\n"
                      "eacgm_anomalies_total{kind=\"call\"} 9\n"
                      "eacgm_anomalies_total{kind=\"interval\"} 1\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace eacgm::exporting
