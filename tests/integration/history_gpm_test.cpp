// `eacgm serve` on the fake NVML keeps each GPU's GPM activities in its history beside
// utilization: GPU 0's fixed counters (SM 0.80, tensor 0.60, DRAM 0.25) come back through
// /api/v1/history/gpus and `eacgm history`; GPU 1 of the "unsupported" scenario has no
// GPM, so its activities are null there and "-" in the table.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class HistoryGpm : public ServeFixture {};

TEST_F(HistoryGpm, EachGpusActivitiesAreKeptBesideItsUtilization) {
  setenv("EACGM_FAKE_NVML_SCENARIO", "unsupported", 1);
  const std::string store = "sqlite:" + dir_ + "/eacgm.db";
  auto serve = start_serve({"--config", config("[store]\ninterval_s = 1\n"), "--store", store});
  json doc;
  const json* gpu0 = nullptr;
  const json* gpu1 = nullptr;
  // GPM needs two passes: the first intervals may hold GPU 0 without its activities.
  ASSERT_TRUE(eventually(
      [&] {
        doc = json::parse(server::testing::get(port_, "/api/v1/history/gpus?since=1h&step=1s").body, nullptr,
                          false);
        gpu0 = gpu1 = nullptr;
        if (!doc.is_object() || !doc.contains("points")) return false;
        for (const json& p : doc["points"]) {
          if (p["gpu"] == 0 && p["sm_active_mean"].is_number()) gpu0 = &p;
          if (p["gpu"] == 1) gpu1 = &p;
        }
        return gpu0 != nullptr && gpu1 != nullptr;
      },
      30s))
      << doc.dump() << "\n"
      << serve->err();
  EXPECT_NEAR((*gpu0)["sm_active_mean"].get<double>(), 0.80, 1e-6) << gpu0->dump();
  EXPECT_NEAR((*gpu0)["sm_active_max"].get<double>(), 0.80, 1e-6) << gpu0->dump();
  EXPECT_NEAR((*gpu0)["tensor_active_mean"].get<double>(), 0.60, 1e-6) << gpu0->dump();
  EXPECT_NEAR((*gpu0)["dram_active_max"].get<double>(), 0.25, 1e-6) << gpu0->dump();
  EXPECT_TRUE((*gpu0)["utilization_mean_percent"].is_number()) << gpu0->dump();
  for (const char* key : {"sm_active_mean", "sm_active_max", "tensor_active_mean", "tensor_active_max",
                          "dram_active_mean", "dram_active_max"}) {
    EXPECT_TRUE((*gpu1)[key].is_null()) << key << ": " << gpu1->dump();
  }

  Subprocess history({bin("eacgm"), "history", "--store", store, "--since", "1h"}, dir_);
  EXPECT_EQ(history.wait(), 0) << history.err();
  EXPECT_NE(history.out().find("util mean util max sm mean tensor mean dram mean"), std::string::npos)
      << history.out();
  EXPECT_NE(history.out().find("   80.0%       60.0%     25.0%"), std::string::npos) << history.out();
}

}  // namespace
}  // namespace eacgm::test
