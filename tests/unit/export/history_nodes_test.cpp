// Nodes from the history's processes: one row per node with its processes, the running
// ones, its distinct jobs and calls, most calls first.
#include "export/history_nodes.h"

#include <gtest/gtest.h>

namespace eacgm::exporting {
namespace {

history::StoredProcess proc(const std::string& node, std::uint32_t pid, const std::string& job,
                            std::uint64_t calls, bool exited = false) {
  history::StoredProcess p;
  p.node = node;
  p.record.key.pid = pid;
  p.record.job = job;
  p.record.first_ns = 1'000'000'000LL * pid;
  p.record.last_ns = 1'000'000'000LL * (pid + 10);
  p.record.exited = exited;
  p.calls = calls;
  p.errors = calls / 10;
  return p;
}

TEST(HistoryNodes, OneRowPerNodeWithItsProcessesJobsAndCalls) {
  const std::vector<history::StoredProcess> rows{
      proc("node-a", 10, "4711", 100), proc("node-a", 11, "4711", 100, true),
      proc("node-a", 12, "", 30, true), proc("node-b", 20, "4711", 50), proc("node-b", 21, "run-7", 500)};
  const auto nodes = history_nodes(rows);
  ASSERT_EQ(nodes.size(), 2U);
  EXPECT_EQ(nodes[0].node, "node-b");  // most calls first
  EXPECT_EQ(nodes[0].processes, 2U);
  EXPECT_EQ(nodes[0].running, 2U);
  EXPECT_EQ(nodes[0].jobs, 2U);
  EXPECT_EQ(nodes[0].calls, 550U);
  const HistoryNode& a = nodes[1];
  EXPECT_EQ(a.node, "node-a");
  EXPECT_EQ(a.processes, 3U);
  EXPECT_EQ(a.running, 1U);
  EXPECT_EQ(a.jobs, 1U);  // a process without a job adds none
  EXPECT_EQ(a.calls, 230U);
  EXPECT_EQ(a.errors, 23U);
  EXPECT_EQ(a.first_ns, 10'000'000'000LL);
  EXPECT_EQ(a.last_ns, 22'000'000'000LL);
  const auto doc = history_nodes_array(nodes);
  ASSERT_EQ(doc.size(), 2U);
  EXPECT_EQ(doc[1]["node"], "node-a");
  EXPECT_EQ(doc[1]["running"], 1);
  EXPECT_EQ(doc[1]["last_ns"], 22'000'000'000LL);
}

TEST(HistoryNodes, NoProcessesNoNodes) {
  EXPECT_TRUE(history_nodes({}).empty());
  EXPECT_EQ(history_nodes_array({}), nlohmann::ordered_json::array());
}

}  // namespace
}  // namespace eacgm::exporting
