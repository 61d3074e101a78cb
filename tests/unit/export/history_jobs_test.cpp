// Jobs of the history (the store gathers them, history/window_sql.h): the ranks below
// world_size that none of a job's processes had, its table row and its JSON.
#include "export/history_jobs.h"

#include <gtest/gtest.h>

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
  const std::string table = history_jobs_table({j});
  EXPECT_NE(table.find("0-1,3 of 4"), std::string::npos) << table;
  EXPECT_NE(table.find("ranks 2 of 4711 never seen"), std::string::npos) << table;
  const auto doc = history_jobs_array({j});
  EXPECT_EQ(doc[0]["missing_ranks"], nlohmann::ordered_json::array({2}));
  EXPECT_EQ(doc[0]["nodes"].size(), 2U);
  EXPECT_EQ(doc[0]["pods"][0], "ml/trainer-0");
  EXPECT_EQ(doc[0]["running"], 2);
}

TEST(HistoryJobs, NoJobsNoTable) { EXPECT_EQ(history_jobs_table({}), ""); }

}  // namespace
}  // namespace eacgm::exporting
