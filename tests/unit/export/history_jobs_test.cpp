// Jobs from the history's processes: one row per job across nodes, with its ranks, the
// ranks below world_size never seen, its pods, and processes without a job left out.
#include "export/history_jobs.h"

#include <gtest/gtest.h>

#include "export/history_tables.h"

namespace eacgm::exporting {
namespace {

history::StoredProcess proc(const std::string& node, std::uint32_t pid, const std::string& job, long rank,
                            long world, std::uint64_t calls, bool exited = false) {
  history::StoredProcess p;
  p.node = node;
  p.record.key.pid = pid;
  p.record.job = job;
  p.record.rank = rank;
  p.record.world_size = world;
  p.record.first_ns = 1'000'000'000LL * pid;
  p.record.last_ns = 1'000'000'000LL * (pid + 10);
  p.record.exited = exited;
  p.record.pod = "trainer-" + std::to_string(rank);
  p.record.namespace_ = "ml";
  p.calls = calls;
  p.errors = rank == 1 ? 2 : 0;
  return p;
}

TEST(HistoryJobs, AJobAcrossNodesIsOneRowWithItsRanks) {
  const std::vector<history::StoredProcess> rows{
      proc("node-a", 10, "4711", 0, 4, 100), proc("node-a", 11, "4711", 1, 4, 100, true),
      proc("node-b", 20, "4711", 3, 4, 50), proc("node-b", 21, "run-7", 0, 1, 500),
      proc("node-c", 30, "", 0, 1, 900)};
  const auto jobs = history_jobs(rows);
  ASSERT_EQ(jobs.size(), 2U);
  EXPECT_EQ(jobs[0].job, "run-7");  // most calls first
  const HistoryJob& j = jobs[1];
  EXPECT_EQ(j.job, "4711");
  EXPECT_EQ(j.nodes, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(j.ranks, (std::vector<long>{0, 1, 3}));
  EXPECT_EQ(j.world_size, 4);
  EXPECT_EQ(j.missing_ranks, (std::vector<long>{2}));
  EXPECT_EQ(j.pods, (std::vector<std::string>{"ml/trainer-0", "ml/trainer-1", "ml/trainer-3"}));
  EXPECT_EQ(j.processes, 3U);
  EXPECT_EQ(j.running, 2U);
  EXPECT_EQ(j.calls, 250U);
  EXPECT_EQ(j.errors, 2U);
  EXPECT_EQ(j.first_ns, 10'000'000'000LL);
  EXPECT_EQ(j.last_ns, 30'000'000'000LL);
  const std::string table = history_jobs_table(jobs);
  EXPECT_NE(table.find("0-1,3 of 4"), std::string::npos) << table;
  EXPECT_NE(table.find("ranks 2 of 4711 never seen"), std::string::npos) << table;
  const auto doc = history_jobs_array(jobs);
  EXPECT_EQ(doc[1]["missing_ranks"], nlohmann::ordered_json::array({2}));
  EXPECT_EQ(doc[1]["nodes"].size(), 2U);
}

TEST(HistoryJobs, NoJobsNoTable) {
  EXPECT_TRUE(history_jobs({proc("n", 1, "", 0, 1, 5)}).empty());
  EXPECT_EQ(history_jobs_table({}), "");
}

}  // namespace
}  // namespace eacgm::exporting
