// Integration tests (root, real eBPF uprobes): anomalies end to end. slow_calls calls
// slow_step() in a user library (libeacgm_slow), traced by a `[[probe]]` of the config
// file; some calls are planted slow. `eacgm run` must flag exactly the planted calls (one
// entry, their repeats coalesced), and a slow stretch whose calls are each below the per-call ratio as a slow
// interval.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

constexpr const char* kConfig = R"([[probe]]
name = "slow_step"
domain = "user"
library = "libeacgm_slow.so*"
symbol = "slow_step"
args = [
  { name = "index", reg = 0, kind = "raw", format = "signed" },
  { name = "planted", reg = 1, kind = "raw", format = "signed" },
  { name = "sleep_us", reg = 2, kind = "raw", format = "signed" },
]
)";

std::set<std::uint64_t> planted_indices(const std::string& out) {
  std::set<std::uint64_t> r;
  std::regex re(R"((?:^|\n)planted (\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    r.insert(std::stoull((*it)[1]));
  }
  return r;
}

json run_json(const std::vector<std::string>& program, std::string& err) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/eacgm.toml") << kConfig;
  std::vector<std::string> argv{bin("eacgm"),        "run", "--json", "--no-gpu", "--config",
                                dir + "/eacgm.toml", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  Subprocess eacgm(argv, dir);
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  err = eacgm.err();
  return json::parse(eacgm.out());
}

TEST(Anomalies, RunFlagsExactlyThePlantedSlowCalls) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  std::string err;
  // 500 calls of ~2 ms; from call 250 on, every 50th sleeps 200 ms (100x).
  const json doc = run_json({bin("slow_calls"), "500", "2000", "200000", "50", "250"}, err);
  const auto planted = planted_indices(err);
  ASSERT_EQ(planted, (std::set<std::uint64_t>{250, 300, 350, 400, 450})) << err;
  const json& a = doc.at("anomalies");
  // The five slow calls of the one process and function, within a minute: one entry,
  // the first of them, with the others counted as its repeats.
  ASSERT_EQ(a.at("calls").size(), 1u) << a.dump(1);
  std::set<std::uint64_t> flagged;
  for (const json& call : a.at("calls")) {
    EXPECT_EQ(call.at("name"), "slow_step") << call.dump();
    EXPECT_EQ(call.at("domain"), "user") << call.dump();
    EXPECT_EQ(call.at("args").at("planted"), 1) << "a call that was not planted: " << call.dump();
    EXPECT_EQ(call.at("comm"), "slow_calls") << call.dump();
    EXPECT_GE(call.at("dur_ns").get<std::uint64_t>(), 200'000'000u) << call.dump();
    EXPECT_GT(call.at("score").get<double>(), 6) << call.dump();
    EXPECT_FALSE(call.at("sampled").get<bool>());
    EXPECT_EQ(call.at("repeats"), planted.size()) << call.dump();
    EXPECT_EQ(call.at("calls"), planted.size()) << call.dump();
    EXPECT_GE(call.at("max_dur_ns").get<std::uint64_t>(), call.at("dur_ns").get<std::uint64_t>());
    // 4 x 50 calls of ~2 ms from the first planted call to the last.
    EXPECT_GE(call.at("last_ts_ns").get<std::uint64_t>() - call.at("ts_ns").get<std::uint64_t>(),
              400'000'000u);
    flagged.insert(call.at("args").at("index").get<std::uint64_t>());
  }
  EXPECT_EQ(flagged, std::set<std::uint64_t>{*planted.begin()}) << a.dump(1);
  EXPECT_EQ(a.at("total"), planted.size());
  EXPECT_EQ(a.at("coalesced"), planted.size() - 1);
  EXPECT_EQ(a.at("level_shifts"), 0);
}

TEST(Anomalies, RunFlagsASlowStretchAsSlowIntervals) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  std::string err;
  // 1,500 calls of ~1 ms; calls 400..999 sleep 3 ms: three times slower, each below the
  // per-call ratio, together a slow stretch of 1.8 s.
  const json doc = run_json({bin("slow_calls"), "1500", "1000", "3000", "100000", "400", "0", "600"}, err);
  ASSERT_EQ(planted_indices(err).size(), 600u) << err;
  const json& a = doc.at("anomalies");
  EXPECT_EQ(a.at("total"), 0) << "no single call is 10x its median: " << a.dump(1);
  ASSERT_GE(a.at("interval_total").get<int>(), 1) << a.dump(1);
  for (const json& v : a.at("intervals")) {
    EXPECT_EQ(v.at("name"), "slow_step") << v.dump();
    EXPECT_GE(v.at("ratio").get<double>(), 1.3) << v.dump();
    EXPECT_LT(v.at("ratio").get<double>(), 4.0) << v.dump();
    EXPECT_GE(v.at("calls").get<int>(), 16) << v.dump();
    EXPECT_GT(v.at("end_ns").get<std::uint64_t>(), v.at("start_ns").get<std::uint64_t>()) << v.dump();
  }
}

}  // namespace
}  // namespace eacgm::test
