// Always-on counts of per-call probes come from the kernel's counters, not from their
// records: short processes whose records the ring buffer drops are still counted exactly;
// and a call whose key the kernel's per-CPU count map cannot take is counted in its spill.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// A user probe (per call in both modes) on a copy of the churn library that only this
// test's processes load: the machine's other processes cannot add to its count.
constexpr const char* kConfig = R"([trace]
ringbuf_mib = 1

[[probe]]
name = "tally_work"
domain = "user"
library = "libeacgm_tally_churn.so"
symbol = "churn_work"
)";

// tally_work's calls in `serve`'s totals (/api/v1/functions).
std::uint64_t work_calls(std::uint16_t port) {
  const json doc = json::parse(server::testing::get(port, "/api/v1/functions").body, nullptr, false);
  std::uint64_t calls = 0;
  if (!doc.is_object()) return 0;
  for (const auto& f : doc.value("functions", json::array())) {
    if (f.value("function", "") == "tally_work") calls += f.value("calls", std::uint64_t{0});
  }
  return calls;
}

TEST_F(ServeFixture, ShortProcessesAreCountedExactlyWhenTheRingDropsTheirRecords) {
  const std::string lib = dir_ + "/libeacgm_tally_churn.so";
  std::filesystem::copy_file(bin("libeacgm_churn.so"), lib);
  std::ofstream(dir_ + "/start") << "";
  std::ofstream(dir_ + "/go0") << "";
  const auto run = [&](int calls) {
    Subprocess prog({bin("churn_calls"), "phases", lib, std::to_string(calls), "1", dir_}, dir_);
    EXPECT_EQ(prog.wait(), 0) << prog.err();
  };
  // The smallest ring buffer (1 MiB): while `serve` is stopped, the processes' records
  // fill it and the rest are dropped; their calls stay counted in the kernel's map.
  auto serve = start_serve({"--config", config(kConfig)}, "always-on");
  // One process first, held until the library's probe is attached (before the reader
  // stops; the kernel then probes the file in every process that maps it).
  const std::string first = dir_ + "/first";
  std::filesystem::create_directory(first);
  std::ofstream(first + "/start") << "";
  Subprocess held({bin("churn_calls"), "phases", lib, "1", "1", first}, dir_);
  ASSERT_TRUE(held.wait_for("loaded")) << held.err();
  ASSERT_TRUE(eventually([&] { return serve->err().find("probes to " + lib) != std::string::npos; }))
      << serve->err();
  std::ofstream(first + "/go0") << "";
  EXPECT_EQ(held.wait(), 0) << held.err();
  ASSERT_TRUE(eventually([&] { return work_calls(port_) == 1; })) << work_calls(port_) << serve->err();

  constexpr int kProcesses = 24, kCalls = 2000;
  serve->signal(SIGSTOP);
  for (int i = 0; i < kProcesses; ++i) run(kCalls);
  serve->signal(SIGCONT);

  const std::uint64_t want = 1 + std::uint64_t{kCalls} * kProcesses;
  EXPECT_TRUE(eventually([&] { return work_calls(port_) >= want; }));
  // A few ticks more: nothing is counted twice once the records left in the ring arrive.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(work_calls(port_), want) << serve->err();
  const std::string drops = metric("eacgm_ring_buffer_drops_total");
  ASSERT_FALSE(drops.empty());
  EXPECT_GT(std::stoull(drops), 0u) << "the ring buffer dropped nothing: the test proves nothing";
}

// `eacgm run --json` of `command` (always-on, the CUDA runtime's probes, a fixed sample
// rate and no duty cycle, so every count is exact), with more [trace] settings.
json run_counted(const std::vector<std::string>& command, const std::string& trace, int want_exit) {
  const std::string config = temp_dir() + "/churn.toml";
  std::ofstream(config) << "[trace]\nbudget = 0\n" << trace;
  std::vector<std::string> argv{bin("eacgm"), "run",       "--json",   "--no-gpu", "--config", config,
                                "--mode",     "always-on", "--probes", "cuda",     "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  Subprocess eacgm(argv);
  EXPECT_EQ(eacgm.wait(), want_exit) << eacgm.err();
  return json::parse(eacgm.out(), nullptr, false);
}

std::map<std::string, std::uint64_t> calls_by_function(const json& doc) {
  std::map<std::string, std::uint64_t> out;
  if (!doc.is_object()) return out;
  for (const auto& f : doc.value("functions", json::array())) {
    out[f.value("function", "")] += f.value("calls", std::uint64_t{0});
  }
  return out;
}

// Short CUDA processes, four at a time, against a per-CPU count map of 16 keys: each
// process needs 8 (its counted functions and the per-call ones' tallies), and an exited
// process's keys stay until the next tick, so the map refuses the keys of most of them
// (the kernel's allocation of a key can fail the same way under churn, when the per-CPU
// cache it takes keys from is empty). Every call is counted all the same, in the spill.
TEST(ChurnCounts, CallsWhoseKeysTheCountMapRefusesAreCountedInItsSpill) {
  constexpr int kRounds = 20, kLanes = 4, kPerLane = 5;
  const std::string prog = bin("cuda_calls") + " --repeat " + std::to_string(kRounds) + " >/dev/null";
  const auto alone =
      calls_by_function(run_counted({bin("cuda_calls"), "--repeat", std::to_string(kRounds)}, "", 7));
  ASSERT_TRUE(alone.contains("cudaLaunchKernel")) << "no counted launches in one process alone";
  const std::string lanes = "for l in $(seq " + std::to_string(kLanes) + "); do (for i in $(seq " +
                            std::to_string(kPerLane) + "); do " + prog + "; done) & done; wait";
  const json doc = run_counted({"/bin/sh", "-c", lanes}, "count_keys = 16\n", 0);
  ASSERT_TRUE(doc.is_object());
  const auto churned = calls_by_function(doc);
  for (const auto& [function, calls] : alone) {
    EXPECT_EQ(churned.contains(function) ? churned.at(function) : 0, calls * kLanes * kPerLane) << function;
  }
  const json& acc = doc["accounting"];
  EXPECT_EQ(acc.value("count_map_full", std::uint64_t{0}), 0u) << acc.dump(2);
  EXPECT_GT(acc.value("count_spilled", std::uint64_t{0}), 0u)
      << "the count map took every key: the test proves nothing\n"
      << acc.dump(2);
}

}  // namespace
}  // namespace eacgm::test
