// Always-on counts of per-call probes come from the kernel's counters, not from their
// records: short processes whose records the ring buffer drops are still counted exactly.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
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

}  // namespace
}  // namespace eacgm::test
