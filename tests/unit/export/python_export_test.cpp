// The Python profile as the daemon serves it: /api/v1/python (one process with ?pid),
// its folded stacks, and the eacgm_python_profile_* families of /metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/python_profile.h"
#include "core/prometheus_text.h"
#include "export/api_json.h"
#include "export/python_metrics.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

// Two processes: 7 runs `hot` three times, 8 runs `cold` once; a 60 s window.
analysis::AnalysisSnapshot snapshot() {
  analysis::PythonProfileLimits limits;
  limits.window_ns = 60'000'000'000;
  limits.max_processes = 2;
  analysis::PythonProfile p(99, limits);
  auto hot = std::make_shared<const PythonCode>(PythonCode{"hot", "/app/x.py", 3});
  auto cold = std::make_shared<const PythonCode>(PythonCode{"cold", "/app/y.py", 9});
  for (std::uint32_t pid : {7u, 7u, 7u, 8u, 9u}) {
    PythonStack s;
    s.pid = pid;
    s.tid = pid;
    s.comm = "python3";
    s.ts_ns = 5'000'000'000;
    s.frames = {{pid == 7 ? hot : cold, 4}};
    p.add(s);
  }
  analysis::AnalysisSnapshot snap;
  snap.parts.put<analysis::PythonHotSpots>(std::make_shared<const analysis::PythonHotSpots>(p.hot_spots()));
  return snap;
}

TEST(PythonExport, ApiListsProcessesBusiestFirstAndStatesTheWindow) {
  const json doc = json::parse(api_python(snapshot(), std::nullopt));
  EXPECT_EQ(doc["sample_hz"], 99);
  EXPECT_EQ(doc["window_s"], 60);
  EXPECT_EQ(doc["samples"], 4);
  EXPECT_EQ(doc["over_cap"]["processes"], 1);  // pid 9 came third
  ASSERT_EQ(doc["processes"].size(), 2u);
  EXPECT_EQ(doc["processes"][0]["pid"], 7);
  EXPECT_EQ(doc["processes"][0]["functions"][0]["function"], "hot");
  EXPECT_EQ(doc["processes"][0]["functions"][0]["self_share"], 1.0);
  EXPECT_TRUE(doc.contains("time_ns"));
}

TEST(PythonExport, ApiKeepsOneProcessWithPid) {
  const json doc = json::parse(api_python(snapshot(), 8u));
  ASSERT_EQ(doc["processes"].size(), 1u);
  EXPECT_EQ(doc["processes"][0]["pid"], 8);
  EXPECT_TRUE(json::parse(api_python(snapshot(), 1234u))["processes"].empty());
}

TEST(PythonExport, FoldedStacksOfOneProcess) {
  const auto snap = snapshot();
  EXPECT_EQ(analysis::folded_text(*snap.find<analysis::PythonHotSpots>()),
            "python3 (7);hot (/app/x.py:3) 3\n"
            "python3 (8);cold (/app/y.py:9) 1\n");
  EXPECT_EQ(analysis::folded_text(*snap.find<analysis::PythonHotSpots>(), 8u),
            "python3 (8);cold (/app/y.py:9) 1\n");
}

TEST(PythonExport, MetricsStateWindowSamplesAndCaps) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_python_metrics(out, *snapshot().find<analysis::PythonHotSpots>());
  const std::string text = out.finish();
  EXPECT_NE(text.find("eacgm_python_profile_window_seconds 60\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_python_profile_samples 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_python_profile_processes 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_python_profile_samples_over_cap_total{cap=\"processes\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE eacgm_python_profile_samples_over_cap_total counter"), std::string::npos)
      << text;
}

TEST(PythonExport, NoMetricsWithoutSampling) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_python_metrics(out, analysis::PythonHotSpots{});
  EXPECT_EQ(out.finish(), "");
}

}  // namespace
}  // namespace eacgm::exporting
