// The daemon's answers on a recorded snapshot (recorded_snapshot.h) are the golden
// files' (golden/), byte for byte: /metrics in both formats, every /api/v1 document, the
// errors of bad parameters, the health routes. The agent's own CPU time and memory are
// the only values masked (golden_requests.h). EACGM_GOLDEN_UPDATE=1 rewrites the files
// after an intended change; review their diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "analysis/anomaly_detector.h"
#include "analysis/call_summary.h"
#include "analysis/host_waits.h"
#include "analysis/memory_ledger.h"
#include "analysis/nccl_stats.h"
#include "analysis/python_profile.h"
#include "core/gpu_sample.h"
#include "core/probe_cost.h"
#include "golden_requests.h"
#include "http_client.h"
#include "recorded_daemon.h"

namespace eacgm::test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DaemonGolden, EveryAnswerOnARecordedSnapshotIsTheGoldenOne) {
  auto snap = recorded_snapshot();
  ASSERT_NE(snap, nullptr);
  server::Daemon daemon(recorded_daemon(snap));
  ASSERT_TRUE(daemon.start());
  const bool update = std::getenv("EACGM_GOLDEN_UPDATE") != nullptr;
  const std::string dir = std::string(EACGM_SOURCE_DIR) + "/tests/unit/server/golden/";
  for (const auto& r : golden_requests()) {
    auto reply =
        server::testing::get(daemon.port(), r.path, r.accept.empty() ? "" : "Accept: " + r.accept + "\r\n");
    const std::string got = golden_text(reply.status, reply.header("Content-Type"), reply.body);
    if (update) {
      std::ofstream(dir + r.file, std::ios::binary) << got;
      continue;
    }
    const std::string want = read_file(dir + r.file);
    ASSERT_FALSE(want.empty()) << dir + r.file << " is missing";
    EXPECT_EQ(want, got) << r.path << " (" << r.file << ")";
  }
  daemon.stop();
}

// The snapshot holds what the golden files need to mean something.
TEST(DaemonGolden, TheRecordedSnapshotHoldsEveryKindOfFigure) {
  auto snap = recorded_snapshot();
  ASSERT_NE(snap, nullptr);
  EXPECT_TRUE(snap->final);
  EXPECT_FALSE(snap->get<analysis::CallSummary>().rows().empty());
  ASSERT_NE(snap->find<GpuSnapshot>(), nullptr);
  EXPECT_EQ(snap->find<GpuSnapshot>()->devices.size(), 2u);
  EXPECT_FALSE(snap->get<analysis::MemorySummary>().rows.empty());
  EXPECT_FALSE(snap->get<analysis::NcclStats>().rows().empty());
  ASSERT_NE(snap->find<analysis::AnomalySummary>(), nullptr);
  // The outlier launch, 4 ms over its median and alone, is held: no news on its own.
  EXPECT_EQ(snap->find<analysis::AnomalySummary>()->total, 0u) << "the outlier launch";
  EXPECT_GT(snap->find<analysis::AnomalySummary>()->functions, 0u);
  ASSERT_NE(snap->find<analysis::PythonHotSpots>(), nullptr);
  EXPECT_GT(snap->find<analysis::PythonHotSpots>()->samples, 0u);
  EXPECT_FALSE(snap->get<OverheadReport>().processes.empty());
  EXPECT_FALSE(snap->get<analysis::HostWaitSummary>().rows.empty());
}

TEST(Daemon, BeforeTheFirstSnapshotRoutesSayWhyAndMetricsHaveTheAgentsOwn) {
  server::Daemon daemon(recorded_daemon(nullptr));
  ASSERT_TRUE(daemon.start());
  for (const char* path : {"/api/v1/gpus", "/api/v1/series", "/api/v1/python", "/readyz"}) {
    auto reply = server::testing::get(daemon.port(), path);
    EXPECT_EQ(reply.status, 503) << path;
    EXPECT_NE(reply.body.find("no snapshot yet"), std::string::npos) << path << ": " << reply.body;
  }
  auto metrics = server::testing::get(daemon.port(), "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("eacgm_agent_start_time_seconds 1790000000"), std::string::npos)
      << metrics.body;
  EXPECT_EQ(metrics.body.find("eacgm_calls_total"), std::string::npos);
  EXPECT_EQ(server::testing::get(daemon.port(), "/healthz").status, 200);
}

TEST(Daemon, AStreamResumedFromAnIdThatIsNotANumberIsRefused) {
  server::Daemon daemon(recorded_daemon(recorded_snapshot()));
  ASSERT_TRUE(daemon.start());
  auto reply = server::testing::get(daemon.port(), "/api/v1/stream", "Last-Event-ID: seven\r\n");
  EXPECT_EQ(reply.status, 400);
  EXPECT_NE(reply.body.find("Last-Event-ID"), std::string::npos) << reply.body;
  daemon.stop();
}

}  // namespace
}  // namespace eacgm::test
