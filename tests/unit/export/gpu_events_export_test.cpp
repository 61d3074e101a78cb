// The GPU health events as JSON (/api/v1/gpu_events: each process with its rank, job and
// calls) and as the eacgm_gpu_health_events_total counter (GPU labels and kind; nothing
// before the first event).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "export/gpu_events_json.h"
#include "export/gpu_health_metrics.h"

namespace eacgm::exporting {
namespace {

analysis::GpuHealthSummary one_event() {
  analysis::GpuHealthSummary s{.events = {}, .total = 3, .dropped = 2, .counts = {}};
  s.events.push_back({5, 0, "GPU-0", "xid", "XID 79", 1, {}});
  s.events[0].processes.push_back(
      {42, "trainer", {{43, "cuda_driver", "cuStreamSynchronize", 4, 2'000'000'000}}});
  s.counts.push_back({0, "GPU-0", "Fake H100", "00000000:19:00.0", "xid", 3});
  return s;
}

TEST(GpuEventsExport, EachProcessCarriesItsRankJobAndCalls) {
  ApiOptions options;
  options.rank_of_pid = [](std::uint32_t pid) {
    sample::RankInfo r;
    if (pid == 42) r.rank = 3;
    return r;
  };
  options.workload_of_pid = [](std::uint32_t) {
    sample::Workload w;
    w.job = "4711";
    w.pod = "train-0";
    return w;
  };
  const json doc = gpu_events_json(one_event(), options);
  EXPECT_EQ(doc.at("total"), 3);
  EXPECT_EQ(doc.at("dropped"), 2);
  const json& e = doc.at("events").at(0);
  EXPECT_EQ(e.at("kind"), "xid");
  EXPECT_EQ(e.at("detail"), "XID 79");
  EXPECT_EQ(e.at("count"), 1);
  const json& p = e.at("processes").at(0);
  EXPECT_EQ(p.at("pid"), 42);
  EXPECT_EQ(p.at("rank"), 3);
  EXPECT_TRUE(p.at("world_size").is_null());
  EXPECT_EQ(p.at("job"), "4711");
  EXPECT_EQ(p.at("pod"), "train-0");
  EXPECT_EQ(
      p.at("calls").dump(),
      R"([{"tid":43,"domain":"cuda_driver","name":"cuStreamSynchronize","ts_ns":4,"age_ns":2000000000}])");
  // Without lookups: no rank or workload fields.
  const json bare = gpu_events_json(one_event(), ApiOptions{});
  EXPECT_FALSE(bare.at("events").at(0).at("processes").at(0).contains("rank"));
  EXPECT_FALSE(bare.at("events").at(0).at("processes").at(0).contains("job"));
}

TEST(GpuEventsExport, TheCounterHasTheGpuLabelsAndKindAndIsAbsentBeforeAnEvent) {
  GpuSystemInfo system;
  system.driver_version = "550.54.15";
  GpuMetricsOptions options;
  options.hostname = "node-1";
  ExpositionWriter empty(ExpositionFormat::kPrometheusText);
  append_gpu_health_metrics(empty, analysis::GpuHealthSummary{}, system, options);
  EXPECT_EQ(empty.finish(), "");
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  append_gpu_health_metrics(w, one_event(), system, options);
  const std::string text = w.finish();
  EXPECT_NE(text.find("# TYPE eacgm_gpu_health_events_total counter\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find(
          "eacgm_gpu_health_events_total{gpu=\"0\",uuid=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\","
          "device=\"nvidia0\",model_name=\"Fake H100\",hostname=\"node-1\",driver_version=\"550.54.15\","
          "kind=\"xid\"} 3\n"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace eacgm::exporting
