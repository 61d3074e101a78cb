// The exposition writer: escaping, counter naming in both formats, cumulative histogram
// buckets, OpenMetrics units and "# EOF", format negotiation from Accept headers.
#include "core/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace eacgm {
namespace {

TEST(PrometheusText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_help("x\\y\nz \"q\"", ExpositionFormat::kPrometheusText), "x\\\\y\\nz \"q\"");
  EXPECT_EQ(escape_help("x\\y\nz \"q\"", ExpositionFormat::kOpenMetrics), "x\\\\y\\nz \\\"q\\\"");

  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  w.begin_family({"eacgm_test_info", MetricType::kGauge, "Help with \\ and\nnewline", ""});
  w.add({{"path", "/a\"b\\c\nd"}}, std::uint64_t{1});
  EXPECT_EQ(w.finish(),
            "# HELP eacgm_test_info Help with \\\\ and\\nnewline\n"
            "# TYPE eacgm_test_info gauge\n"
            "eacgm_test_info{path=\"/a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(PrometheusText, FormatsValues) {
  EXPECT_EQ(format_value(1.0), "1");
  EXPECT_EQ(format_value(-3.0), "-3");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(123.456), "123.456");
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(std::stod(format_value(1e20)), 1e20);
  EXPECT_EQ(format_le(1.0, ExpositionFormat::kPrometheusText), "1");
  EXPECT_EQ(format_le(1.0, ExpositionFormat::kOpenMetrics), "1.0");
  EXPECT_EQ(format_le(0.005, ExpositionFormat::kOpenMetrics), "0.005");
}

TEST(PrometheusText, CounterSuffixRulesPerFormat) {
  for (auto f : {ExpositionFormat::kPrometheusText, ExpositionFormat::kOpenMetrics}) {
    ExpositionWriter w(f);
    w.begin_family({"eacgm_events_total", MetricType::kCounter, "Events.", ""});
    w.add({}, std::uint64_t{7});
    w.begin_family(
        {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", MetricType::kCounter, "Total number of PCIe retries.", ""});
    w.add({{"gpu", "0"}}, std::uint64_t{3});
    const std::string text = w.finish();
    if (f == ExpositionFormat::kPrometheusText) {
      EXPECT_EQ(
          text,
          "# HELP eacgm_events_total Events.\n# TYPE eacgm_events_total counter\neacgm_events_total 7\n"
          "# HELP DCGM_FI_DEV_PCIE_REPLAY_COUNTER Total number of PCIe retries.\n"
          "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter\nDCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\"} 3\n");
    } else {
      // The family drops _total, the sample keeps it; a legacy counter name becomes
      // `unknown` so its series name does not change.
      EXPECT_EQ(
          text,
          "# HELP eacgm_events Events.\n# TYPE eacgm_events counter\neacgm_events_total 7\n"
          "# HELP DCGM_FI_DEV_PCIE_REPLAY_COUNTER Total number of PCIe retries.\n"
          "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER unknown\nDCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\"} 3\n"
          "# EOF\n");
    }
  }
}

TEST(PrometheusText, OpenMetricsUnitOnlyWhenTheNameCarriesIt) {
  ExpositionWriter w(ExpositionFormat::kOpenMetrics);
  w.begin_family({"eacgm_gpu_memory_total_bytes", MetricType::kGauge, "Size.", "bytes"});
  w.add({}, std::uint64_t{1});
  w.begin_family({"eacgm_gpu_nvlink_tx_bytes_total", MetricType::kCounter, "Bytes.", "bytes"});
  w.add({}, std::uint64_t{2});
  w.begin_family({"DCGM_FI_DEV_FB_USED", MetricType::kGauge, "Used.", "bytes"});  // no suffix: no UNIT
  w.add({}, std::uint64_t{3});
  const std::string text = w.finish();
  EXPECT_NE(text.find("# UNIT eacgm_gpu_memory_total_bytes bytes\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE eacgm_gpu_nvlink_tx_bytes counter\n# UNIT eacgm_gpu_nvlink_tx_bytes bytes\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("# UNIT DCGM"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("DCGM_FI_DEV_FB_USED 3\n# EOF\n")) << text;

  ExpositionWriter p(ExpositionFormat::kPrometheusText);
  p.begin_family({"eacgm_gpu_memory_total_bytes", MetricType::kGauge, "Size.", "bytes"});
  p.add({}, std::uint64_t{1});
  const std::string plain = p.finish();
  EXPECT_EQ(plain.find("# UNIT"), std::string::npos);
  EXPECT_EQ(plain.find("# EOF"), std::string::npos);
}

TEST(PrometheusText, HistogramBucketsAreCumulative) {
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  w.begin_family({"eacgm_call_duration_seconds", MetricType::kHistogram, "Call durations.", "seconds"});
  const std::vector<HistogramBucket> buckets = {{0.001, 5}, {0.01, 0}, {0.1, 3}, {1.0, 2}};
  w.add_histogram({{"fn", "cudaMemcpy"}}, buckets, 4.25, 11);
  EXPECT_EQ(w.finish(),
            "# HELP eacgm_call_duration_seconds Call durations.\n"
            "# TYPE eacgm_call_duration_seconds histogram\n"
            "eacgm_call_duration_seconds_bucket{fn=\"cudaMemcpy\",le=\"0.001\"} 5\n"
            "eacgm_call_duration_seconds_bucket{fn=\"cudaMemcpy\",le=\"0.01\"} 5\n"
            "eacgm_call_duration_seconds_bucket{fn=\"cudaMemcpy\",le=\"0.1\"} 8\n"
            "eacgm_call_duration_seconds_bucket{fn=\"cudaMemcpy\",le=\"1\"} 10\n"
            "eacgm_call_duration_seconds_bucket{fn=\"cudaMemcpy\",le=\"+Inf\"} 11\n"
            "eacgm_call_duration_seconds_sum{fn=\"cudaMemcpy\"} 4.25\n"
            "eacgm_call_duration_seconds_count{fn=\"cudaMemcpy\"} 11\n");

  ExpositionWriter om(ExpositionFormat::kOpenMetrics);
  om.begin_family({"eacgm_call_duration_seconds", MetricType::kHistogram, "Call durations.", "seconds"});
  om.add_histogram({}, buckets, 4.25, 11);
  const std::string text = om.finish();
  EXPECT_NE(text.find("# UNIT eacgm_call_duration_seconds seconds\n"), std::string::npos);
  EXPECT_NE(text.find("eacgm_call_duration_seconds_bucket{le=\"1.0\"} 10\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_call_duration_seconds_bucket{le=\"+Inf\"} 11\n"), std::string::npos);
  EXPECT_TRUE(text.ends_with("eacgm_call_duration_seconds_count 11\n# EOF\n")) << text;
}

TEST(PrometheusText, EmptyFamiliesLeaveNothingAndNamesAppearOnce) {
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  w.begin_family({"eacgm_absent", MetricType::kGauge, "Never sampled.", ""});
  w.begin_family({"eacgm_once", MetricType::kGauge, "Once.", ""});
  w.add({}, 1.5);
  w.begin_family({"eacgm_once", MetricType::kGauge, "Once.", ""});
  w.add({}, 2.5);
  EXPECT_EQ(w.finish(), "# HELP eacgm_once Once.\n# TYPE eacgm_once gauge\neacgm_once 1.5\n");
  ExpositionWriter om(ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(om.finish(), "# EOF\n");
}

TEST(PrometheusText, WritesFixedDecimals) {
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  w.begin_family({"eacgm_x_seconds", MetricType::kGauge, "X.", ""});
  w.add_fixed({{"a", "b"}}, 0.25, 6);
  w.add_fixed({}, 2.0 / 3, 3);
  w.add_fixed({}, std::numeric_limits<double>::quiet_NaN(), 6);
  EXPECT_EQ(w.finish(),
            "# HELP eacgm_x_seconds X.\n# TYPE eacgm_x_seconds gauge\neacgm_x_seconds{a=\"b\"} 0.250000\n"
            "eacgm_x_seconds 0.667\neacgm_x_seconds NaN\n");
}

TEST(PrometheusText, NegotiatesFromAccept) {
  using F = ExpositionFormat;
  EXPECT_EQ(negotiate_format(""), F::kPrometheusText);
  EXPECT_EQ(negotiate_format("*/*"), F::kPrometheusText);
  EXPECT_EQ(negotiate_format("text/plain"), F::kPrometheusText);
  // Prometheus 2.x's scrape header.
  EXPECT_EQ(negotiate_format("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                             "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            F::kOpenMetrics);
  EXPECT_EQ(negotiate_format("application/openmetrics-text; version=1.0.0; charset=utf-8"), F::kOpenMetrics);
  EXPECT_EQ(negotiate_format("application/openmetrics-text"), F::kOpenMetrics);
  // Only an OpenMetrics version we do not write, or refused, or preferred less.
  EXPECT_EQ(negotiate_format("application/openmetrics-text;version=0.0.1,text/plain;q=0.5"),
            F::kPrometheusText);
  EXPECT_EQ(negotiate_format("application/openmetrics-text;q=0,text/plain"), F::kPrometheusText);
  EXPECT_EQ(negotiate_format("text/plain;q=0.9, application/openmetrics-text;q=0.5"), F::kPrometheusText);
  EXPECT_EQ(content_type(F::kPrometheusText), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(content_type(F::kOpenMetrics), "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(PrometheusText, ValidatesNames) {
  EXPECT_TRUE(is_valid_metric_name("eacgm_x:y_total"));
  EXPECT_TRUE(is_valid_metric_name("DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_FALSE(is_valid_metric_name("1abc"));
  EXPECT_FALSE(is_valid_metric_name("a-b"));
  EXPECT_TRUE(is_valid_label_name("modelName"));
  EXPECT_FALSE(is_valid_label_name("__name__"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
}

}  // namespace
}  // namespace eacgm
