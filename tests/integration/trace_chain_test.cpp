// Integration test (root, real eBPF): pointer-chain captures from a user probe config
// (`from = "<earlier arg>"`), including a chain broken by a NULL pointer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

constexpr const char* kConfig = R"([[probe]]
name = "chain_visit"
domain = "chain"
library = "chain_calls"
symbol = "chain_visit"
args = [
  { name = "inner", reg = 0, kind = "deref_u64", offset = 8, format = "hex" },
  { name = "name_ptr", from = "inner", kind = "deref_u64", offset = 8, format = "hex" },
  { name = "name", from = "name_ptr", kind = "string" },
  { name = "count", from = "inner", kind = "deref_u32", offset = 16, format = "signed" },
]
)";

TEST(TraceChain, ArgsReadThroughEarlierArgs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  std::string dir = temp_dir();
  std::ofstream(dir + "/eacgm.toml") << kConfig;
  Subprocess p({bin("eacgm"), "trace", "--config", dir + "/eacgm.toml", "--probes", "chain", "-o",
                dir + "/events.jsonl", "--", bin("chain_calls")},
               dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  EXPECT_NE(p.out().find("sum=7"), std::string::npos) << p.out();
  std::vector<json> events;
  std::istringstream in(read_file(dir + "/events.jsonl"));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) events.push_back(json::parse(line));
  }
  ASSERT_EQ(events.size(), 3u) << p.err();
  EXPECT_EQ(events[0]["args"]["name"], "alpha");
  EXPECT_EQ(events[0]["args"]["count"], 3);
  EXPECT_EQ(events[0]["ret"], 3);
  EXPECT_EQ(events[1]["args"]["name"], "beta");
  EXPECT_EQ(events[1]["args"]["count"], 5);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NE(events[i]["args"]["inner"], "0x0") << events[i].dump();
    EXPECT_NE(events[i]["args"]["name_ptr"], "0x0") << events[i].dump();
  }
  // NULL in the chain: read as 0x0, and everything read through it is unreadable.
  const json& broken = events[2]["args"];
  EXPECT_EQ(broken["inner"], "0x0") << events[2].dump();
  EXPECT_TRUE(broken["name_ptr"].is_null()) << events[2].dump();
  EXPECT_TRUE(broken["name"].is_null()) << events[2].dump();
  EXPECT_TRUE(broken["count"].is_null()) << events[2].dump();
  EXPECT_EQ(events[2]["ret"], -1);
  EXPECT_NE(p.err().find("read_faults=3"), std::string::npos) << p.err();
}

// A user's function returns data: its results are failures only by the rule its spec
// gives (`errors`), never because they are not zero.
TEST(TraceChain, AUserProbesResultsAreFailuresOnlyByItsErrorsRule) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  const std::pair<const char*, int> cases[] = {
      {"", 0}, {"errors = \"minus_one\"\n", 1}, {"errors = \"nonzero\"\n", 3}};
  for (const auto& [rule, failures] : cases) {
    std::string dir = temp_dir();
    std::string config = kConfig;
    config.insert(config.find("args = ["), rule);
    std::ofstream(dir + "/eacgm.toml") << config;
    Subprocess p({bin("eacgm"), "run", "--json", "--mode", "per-call", "--config", dir + "/eacgm.toml",
                  "--probes", "chain", "--", bin("chain_calls")},
                 dir);
    ASSERT_EQ(p.wait(), 0) << p.err();
    const json report = json::parse(p.out().substr(p.out().find('{')));
    bool found = false;
    for (const auto& f : report["functions"]) {
      if (f["function"] != "chain_visit") continue;
      found = true;
      EXPECT_EQ(f["calls"], 3) << rule;
      EXPECT_EQ(f["errors"], failures) << rule << f.dump();
    }
    EXPECT_TRUE(found) << rule << report["functions"].dump();
  }
}

}  // namespace
}  // namespace eacgm::test
