// /api/v1/series (GPM activity beside utilization), /api/v1/anomalies and the processes' seen times, exit and
// container from one LiveAnalysis snapshot.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "../common/cuda_malloc_probe.h"
#include "analysis/live_analysis.h"
#include "analysis/series_window.h"
#include "export/api_json.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

CallEvent call(std::uint32_t pid, std::uint64_t ts_ns, std::uint64_t dur_ns) {
  const auto& probe = test::cuda_malloc_probe();
  CallEvent e;
  e.probe = probe;
  e.pid = pid;
  e.tid = pid;
  e.ts_ns = ts_ns;
  e.dur_ns = dur_ns;
  e.has_exit = true;
  return e;
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

TEST(ApiSeries, PointsOfTheWindowWithDomainsAndGpus) {
  analysis::LiveAnalysis live;
  const std::uint64_t now = now_ns();
  std::vector<CallEvent> calls{call(1, now - 2'000'000'000, 10), call(1, now - 2'000'000'000, 10),
                               call(1, now - 100'000'000'000ull, 10)};
  live.on_calls(calls);
  GpuSnapshot g;
  g.time = std::chrono::system_clock::now();
  DeviceSample d;
  d.index = 0;
  d.utilization_gpu_percent = 40;
  d.memory_used_bytes = 1234;
  g.devices.push_back(d);
  d.index = 1;
  d.gpm_supported = true;
  d.gpm = GpmCounters{};
  d.gpm->sm_active = 0.8;
  d.gpm->tensor_active = 0.6;
  d.gpm->dram_active = 0.25;
  g.devices.push_back(d);
  live.on_gpu(g);
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  auto snap = live.snapshot();
  auto doc = json::parse(api_series(analysis::series_window(*snap, 60)));
  EXPECT_EQ(doc["interval_s"], 1);
  ASSERT_EQ(doc["points"].size(), 2u) << doc.dump();  // the call 100 s ago is outside
  EXPECT_EQ(doc["points"][0]["calls"], 2);
  EXPECT_EQ(doc["points"][0]["t"], (now - 2'000'000'000) / 1'000'000'000);
  EXPECT_EQ(doc["points"][0]["domains"]["cuda"], 2);
  EXPECT_EQ(doc["points"][1]["gpus"][0]["gpu"], 0);
  EXPECT_EQ(doc["points"][1]["gpus"][0]["util"], 40.0);
  EXPECT_EQ(doc["points"][1]["gpus"][0]["memory_used_bytes"], 1234);
  for (const char* key : {"sm_active", "tensor_active", "dram_active"})
    EXPECT_TRUE(doc["points"][1]["gpus"][0][key].is_null()) << key << ": no GPM";
  // Summed in floats, written to 6 decimals: the ratios read as they were sampled.
  EXPECT_EQ(doc["points"][1]["gpus"][1]["sm_active"], 0.8);
  EXPECT_EQ(doc["points"][1]["gpus"][1]["tensor_active"], 0.6);
  EXPECT_EQ(doc["points"][1]["gpus"][1]["dram_active"], 0.25);
  EXPECT_EQ(json::parse(api_series(analysis::series_window(*snap, 900)))["points"].size(), 3u);
}

TEST(ApiAnomalies, ListsFlaggedCalls) {
  analysis::LiveAnalysis live;
  std::vector<CallEvent> calls;
  for (int i = 0; i < 300; ++i) calls.push_back(call(3, 1000 + i, 1000 + i % 10));
  calls.push_back(call(3, 5000, 150'000'000));  // alone: 100 ms or more over the median
  live.on_calls(calls);
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  auto doc = json::parse(api_anomalies(*live.snapshot()));
  EXPECT_EQ(doc["total"], 1);
  ASSERT_EQ(doc["anomalies"].size(), 1u);
  EXPECT_EQ(doc["anomalies"][0]["ts_ns"], 5000);
  EXPECT_EQ(doc["anomalies"][0]["pid"], 3);
  EXPECT_EQ(doc["anomalies"][0]["name"], "cudaMalloc");
  EXPECT_EQ(doc["anomalies"][0]["dur_ns"], 150'000'000);
  EXPECT_GT(doc["anomalies"][0]["score"].get<double>(), 6);
}

TEST(ApiProcesses, SeenTimesExitAndContainer) {
  analysis::LiveAnalysis live;
  std::vector<CallEvent> calls{call(8, 1'000, 10), call(8, 2'000, 10), call(9, 3'000, 10)};
  live.on_calls(calls);
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  ApiOptions o;
  o.process_alive = [](std::uint32_t pid) { return pid == 9; };
  o.workload_of_pid = [](std::uint32_t pid) {
    sample::Workload w;
    if (pid == 9) {
      w.container_id = std::string(64, 'a');
      w.pod_uid = "0b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a";
      w.pod = "trainer-0";
      w.namespace_ = "ml";
      w.container = "pytorch";
      w.job = "4711";
      w.gpus = {"GPU-aaa"};
    }
    return w;
  };
  auto doc = json::parse(api_processes(*live.snapshot(), o));
  ASSERT_EQ(doc["processes"].size(), 2u);
  const json& p8 = doc["processes"][0];
  EXPECT_EQ(p8["pid"], 8);
  EXPECT_EQ(p8["first_seen_ns"], 1'000);
  EXPECT_EQ(p8["last_seen_ns"], 2'010);
  EXPECT_EQ(p8["exited"], true);
  EXPECT_TRUE(p8["container"].is_null());
  EXPECT_TRUE(p8["pod"].is_null());
  EXPECT_EQ(p8["pod_gpus"], json::array());
  const json& p9 = doc["processes"][1];
  EXPECT_EQ(p9["exited"], false);
  EXPECT_EQ(p9["container_id"], std::string(64, 'a'));
  EXPECT_EQ(p9["pod_uid"], "0b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a");
  EXPECT_EQ(p9["pod"], "trainer-0");
  EXPECT_EQ(p9["namespace"], "ml");
  EXPECT_EQ(p9["container"], "pytorch");
  EXPECT_EQ(p9["job"], "4711");
  EXPECT_TRUE(p9["job_step"].is_null());
  EXPECT_EQ(p9["pod_gpus"], json::array({"GPU-aaa"}));
  // Without the callbacks the fields are left out.
  auto plain = json::parse(api_processes(*live.snapshot(), ApiOptions{}));
  EXPECT_FALSE(plain["processes"][0].contains("exited"));
  EXPECT_FALSE(plain["processes"][0].contains("container"));
  EXPECT_FALSE(plain["processes"][0].contains("pod"));
}

// Names come from traced processes and /proc (any bytes): a document that holds bytes
// that are not UTF-8 is still written, with U+FFFD in their place, never an exception.
TEST(ApiProcesses, NamesThatAreNotUtf8BecomeReplacementCharacters) {
  analysis::LiveAnalysis live;
  CallEvent e = call(8, 1'000, 10);
  const char comm[] = {'p', 'y', '\xe2', '\x82', 0};  // a name cut inside a character
  std::memcpy(e.comm.data(), comm, sizeof comm);
  std::vector<CallEvent> calls{e};
  live.on_calls(calls);
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  ApiOptions o;
  o.workload_of_pid = [](std::uint32_t) {
    sample::Workload w;
    w.container = "c\xff";
    return w;
  };
  std::string text;
  ASSERT_NO_THROW(text = api_processes(*live.snapshot(), o));
  auto doc = json::parse(text);
  EXPECT_EQ(doc["processes"][0]["comm"], "py\xef\xbf\xbd");
  EXPECT_EQ(doc["processes"][0]["container"], "c\xef\xbf\xbd");
  ASSERT_NO_THROW(text = run_report_json(*live.snapshot(), o));
  EXPECT_TRUE(json::accept(text));
}

}  // namespace
}  // namespace eacgm::exporting
