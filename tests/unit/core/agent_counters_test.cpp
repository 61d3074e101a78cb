// The agent counter table: every key the sources register is declared in it (a key
// missing there has no metric and no help), and names are unique.
#include "core/agent_counters.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace eacgm {
namespace {

TEST(AgentCounters, EveryKeyTheSourcesRegisterIsInTheTable) {
  std::set<std::string> keys, metrics;
  for (const auto& spec : agent_counter_table()) {
    EXPECT_TRUE(keys.insert(std::string(spec.key)).second) << spec.key;
    EXPECT_TRUE(metrics.insert(std::string(spec.metric)).second) << spec.metric;
  }
  const std::regex use(R"re(agent_counter\("([a-z_0-9]+)"\))re");
  std::size_t uses = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(EACGM_SOURCE_DIR "/src")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), use), end; it != end; ++it) {
      ++uses;
      EXPECT_TRUE(keys.contains((*it)[1].str())) << entry.path() << ": " << (*it)[1].str();
    }
  }
  EXPECT_GT(uses, 20u);  // the scan found the registrations
}

}  // namespace
}  // namespace eacgm
