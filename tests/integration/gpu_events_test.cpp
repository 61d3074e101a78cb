// Integration test (root, real eBPF uprobes): GPU health events tied to the work. The fake
// NVML's "health" scenario turns GPU 0 faulty on cue (XID 79, uncorrected ECC errors, a
// hardware slowdown) while a traced program, listed on GPU 0, waits in the fake
// libcuda's cuStreamSynchronize; /api/v1/gpu_events must name that process with its rank
// and job and the call it was in, and /metrics count the events.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using server::testing::get;

class GpuEvents : public ServeFixture {
 protected:
  void TearDown() override {
    unsetenv("EACGM_FAKE_NVML_HEALTH_FILE");
    ServeFixture::TearDown();
  }
  // The listed event of GPU 0 of `kind` (and `detail`, when given), null when none.
  json event_of(const std::string& kind, const std::string& detail = "") {
    const json doc = json::parse(get(port_, "/api/v1/gpu_events").body, nullptr, false);
    if (doc.is_discarded()) return nullptr;
    for (const json& e : doc.at("events")) {
      if (e.at("kind") == kind && e.at("gpu") == 0 && (detail.empty() || e.at("detail") == detail)) return e;
    }
    return nullptr;
  }
};

TEST_F(GpuEvents, AnEventNamesTheProcessOnTheGpuWithItsRankJobAndCallInFlight) {
  const std::string fault = dir_ + "/fault", go = dir_ + "/go";
  setenv("EACGM_FAKE_NVML_SCENARIO", "health", 1);
  setenv("EACGM_FAKE_NVML_GPU_COMM", "block_calls", 1);
  setenv("EACGM_FAKE_NVML_HEALTH_FILE", fault.c_str(), 1);
  auto serve = start_serve({"--probes", "cuda_driver"}, "always-on");
  Subprocess program({"/usr/bin/env", "RANK=3", "SLURM_JOB_ID=4711", bin("block_calls"), "--wait-file", go,
                      "--cuda", bin("fake_libcuda/libcuda.so.1"), "0", "0", "8000"},
                     dir_);
  ASSERT_TRUE(program.wait_for("ready")) << program.err();
  ASSERT_TRUE(serve->wait_for("fake_libcuda/libcuda.so.1", true)) << serve->err();
  std::ofstream(go) << "go";
  ASSERT_TRUE(program.wait_for("long_start")) << program.err();
  // A scan of the calls in flight (once a second) has seen the wait; then the fault.
  std::this_thread::sleep_for(1500ms);
  std::ofstream(fault) << "";

  // XID 31 comes at the start (an event unless the first pass already counts it); XID 79
  // is the fault's.
  json xid;
  ASSERT_TRUE(eventually([&] { return (xid = event_of("xid", "XID 79")).is_object(); }))
      << get(port_, "/api/v1/gpu_events").body << serve->err();
  EXPECT_EQ(xid.at("uuid").get<std::string>().rfind("GPU-", 0), 0u) << xid.dump();
  json mine;
  for (const json& p : xid.at("processes")) {
    if (p.at("pid") == program.pid()) mine = p;
  }
  ASSERT_TRUE(mine.is_object()) << xid.dump();
  EXPECT_EQ(mine.at("comm"), "block_calls");
  EXPECT_EQ(mine.at("rank"), 3);
  EXPECT_EQ(mine.at("job"), "4711");
  ASSERT_EQ(mine.at("calls").size(), 1u) << mine.dump();
  EXPECT_EQ(mine.at("calls")[0].at("name"), "cuStreamSynchronize");
  EXPECT_EQ(mine.at("calls")[0].at("domain"), "cuda_driver");
  EXPECT_GT(mine.at("calls")[0].at("age_ns").get<std::uint64_t>(), 0u);

  // The other changes of the same fault, each once.
  json ecc, slowdown;
  ASSERT_TRUE(eventually([&] {
    ecc = event_of("ecc_uncorrected");
    slowdown = event_of("hw_slowdown");
    return ecc.is_object() && slowdown.is_object();
  })) << get(port_, "/api/v1/gpu_events").body;
  EXPECT_EQ(ecc.at("detail"), "ECC uncorrected +2");
  EXPECT_EQ(slowdown.at("detail"), "hw_slowdown began");
  // GPU 0's fixed processes, and the program.
  EXPECT_EQ(slowdown.at("processes").size(), 3u) << slowdown.dump();
  // Power capping held from the start is no event.
  EXPECT_TRUE(event_of("sw_power_cap").is_null());

  const std::string metrics = get(port_, "/metrics").body;
  EXPECT_NE(metrics.find("eacgm_gpu_health_events_total{gpu=\"0\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find(",kind=\"xid\"} "), std::string::npos) << metrics;
  EXPECT_NE(metrics.find(",kind=\"ecc_uncorrected\"} 2\n"), std::string::npos) << metrics;

  EXPECT_EQ(program.wait(), 0) << program.err();
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

}  // namespace
}  // namespace eacgm::test
