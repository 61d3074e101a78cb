// The agents list: each node's agent with its URL and version, up while seen within three
// of its heartbeats, else down since its last (JSON: down_since_ns; text: UTC time).
#include "export/agent_list.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace eacgm::exporting {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kNow = 1'793'491'200 * kS;  // 2026-11-01 00:00:00 UTC

history::AgentList two_agents() {
  history::AgentList list;
  list.now_ns = kNow;
  list.rows.push_back({"node-a", "http://node-a:9977", "0.1.0", kNow - 3600 * kS, kNow - 5 * kS, 10 * kS});
  list.rows.push_back({"node-b", "http://node-b:9977", "0.1.0", kNow - 7200 * kS, kNow - 31 * kS, 10 * kS});
  return list;
}

TEST(AgentList, JsonSaysWhichAgentIsUpAndSinceWhenTheOtherIsDown) {
  const auto doc = nlohmann::json::parse(agents_json(two_agents(), "postgresql://db/fleet"));
  EXPECT_EQ(doc["store"], "postgresql://db/fleet");
  EXPECT_EQ(doc["now_ns"], kNow);
  ASSERT_EQ(doc["agents"].size(), 2u);
  const auto& a = doc["agents"][0];
  EXPECT_EQ(a["node"], "node-a");
  EXPECT_EQ(a["url"], "http://node-a:9977");
  EXPECT_EQ(a["version"], "0.1.0");
  EXPECT_EQ(a["heartbeat_s"], 10.0);
  EXPECT_EQ(a["up"], true);
  EXPECT_TRUE(a["down_since_ns"].is_null());
  const auto& b = doc["agents"][1];
  EXPECT_EQ(b["up"], false) << "31 s without a heartbeat of 10 s";
  EXPECT_EQ(b["down_since_ns"], kNow - 31 * kS);
}

TEST(AgentList, TextHasOneLinePerNode) {
  EXPECT_EQ(render_agents_text(two_agents(), "postgresql://db/fleet"),
            "agents in postgresql://db/fleet: 2\n"
            "NODE    URL                 VERSION  STATE\n"
            "node-a  http://node-a:9977  0.1.0    up\n"
            "node-b  http://node-b:9977  0.1.0    down since 2026-10-31 23:59:29 UTC\n");
  EXPECT_EQ(render_agents_text({}, "sqlite:/x.db"), "agents in sqlite:/x.db: 0\n");
}

}  // namespace
}  // namespace eacgm::exporting
