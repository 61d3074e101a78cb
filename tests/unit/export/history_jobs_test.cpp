// Jobs of the history (the store gathers them, history/window_sql.h): the ranks below
// world_size that none of a job's processes had, its table row and its JSON.
#include "export/history_jobs.h"

#include <gtest/gtest.h>

#include <tuple>

#include "export/history_tables.h"

namespace eacgm::exporting {
namespace {

history::StoredJob job_4711() {
  history::StoredJob j;
  j.job = "4711";
  j.nodes = {"node-a", "node-b"};
  j.ranks = {0, 1, 3};
  j.world_size = 4;
  j.pods = {"ml/trainer-0", "ml/trainer-1", "ml/trainer-3"};
  j.processes = 3;
  j.running = 2;
  j.calls = 250;
  j.errors = 2;
  j.first_ns = 10'000'000'000LL;
  j.last_ns = 30'000'000'000LL;
  return j;
}

TEST(HistoryJobs, AJobSaysTheRanksBelowItsWorldSizeNeverSeen) {
  const history::StoredJob j = job_4711();
  EXPECT_EQ(missing_ranks(j), (std::vector<long>{2}));
  history::StoredJob unsized = j;
  unsized.world_size.reset();
  EXPECT_TRUE(missing_ranks(unsized).empty());
  const std::string table = history_jobs_table({j}, {});
  EXPECT_NE(table.find("0-1,3 of 4"), std::string::npos) << table;
  EXPECT_NE(table.find("ranks 2 of 4711 never seen"), std::string::npos) << table;
  const auto doc = history_jobs_array({j}, {});
  EXPECT_EQ(doc[0]["missing_ranks"], nlohmann::ordered_json::array({2}));
  EXPECT_EQ(doc[0]["nodes"].size(), 2U);
  EXPECT_EQ(doc[0]["pods"][0], "ml/trainer-0");
  EXPECT_EQ(doc[0]["running"], 2);
  // A job that held no GPU in the window: nothing held, nothing idle, no idle share.
  EXPECT_EQ(doc[0]["gpu_hours"], 0.0);
  EXPECT_TRUE(doc[0]["idle_share"].is_null());
  EXPECT_EQ(doc[0]["activity_basis"], "none");
  EXPECT_EQ(table.find("GPU-h"), std::string::npos) << table;
}

TEST(HistoryJobs, AJobCarriesItsReportsHeadlineFigures) {
  history::JobReportRow other;
  other.job = "9";
  other.gpu_hours = 99;
  history::JobReportRow u;
  u.job = "4711";
  u.gpu_hours = 8;
  u.idle_gpu_hours = 2;
  u.activity_basis = "sm_active";
  std::tie(u.energy_kwh, u.cost, u.idle_cost) = std::tuple{3.5, 20.0, 5.0};
  const auto doc = history_jobs_array({job_4711()}, {other, u});
  const auto& j = doc[0];
  nlohmann::ordered_json figures;
  for (const char* key :
       {"gpu_hours", "idle_gpu_hours", "idle_share", "energy_kwh", "cost", "idle_cost", "activity_basis"})
    figures[key] = j[key];
  EXPECT_EQ(figures.dump(),
            R"({"gpu_hours":8.0,"idle_gpu_hours":2.0,"idle_share":0.25,"energy_kwh":3.5,"cost":20.0,)"
            R"("idle_cost":5.0,"activity_basis":"sm_active"})");
  // The list's own keys stay, first.
  EXPECT_EQ(j.begin().key(), "job");
  EXPECT_EQ(j["missing_ranks"], nlohmann::ordered_json::array({2}));
  const std::string table = history_jobs_table({job_4711()}, {u});
  EXPECT_NE(table.find("  8.00 GPU-h held, 2.00 idle (25%, sm_active), 3.500 kWh, cost 20.00, idle 5.00\n"),
            std::string::npos)
      << table;
}

TEST(HistoryJobs, NoJobsNoTable) { EXPECT_EQ(history_jobs_table({}, {}), ""); }

}  // namespace
}  // namespace eacgm::exporting
