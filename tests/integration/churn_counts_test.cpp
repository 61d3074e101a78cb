// Always-on counts of per-call probes come from the kernel's counters, not from their
// records: short processes whose records the ring buffer drops are still counted exactly.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// cudaMalloc calls in `serve`'s totals (/api/v1/functions).
std::uint64_t malloc_calls(std::uint16_t port) {
  const json doc = json::parse(server::testing::get(port, "/api/v1/functions").body, nullptr, false);
  std::uint64_t calls = 0;
  if (!doc.is_object()) return 0;
  for (const auto& f : doc.value("functions", json::array())) {
    if (f.value("function", "") == "cudaMalloc") calls += f.value("calls", std::uint64_t{0});
  }
  return calls;
}

void run_cuda_calls(const std::string& dir, int repeat) {
  Subprocess prog({bin("cuda_calls"), "--repeat", std::to_string(repeat)}, dir);
  prog.wait();  // its calls fail without a GPU (a non-zero exit), after entering libcudart
}

TEST_F(ServeFixture, ShortProcessesAreCountedExactlyWhenTheRingDropsTheirRecords) {
  // The smallest ring buffer (1 MiB): while `serve` is stopped, the processes' records
  // fill it and the rest are dropped; their calls stay counted in the kernel's map.
  const std::string cfg = config("[trace]\nringbuf_mib = 1\n");
  auto serve = start_serve({"--config", cfg}, "always-on");
  // One process first, so that libcudart is attached before the reader stops.
  run_cuda_calls(dir_, 1);
  ASSERT_TRUE(eventually([&] { return malloc_calls(port_) == 2; })) << malloc_calls(port_) << serve->err();

  constexpr int kProcesses = 24, kRepeat = 400;  // 2 cudaMalloc per repeat
  serve->signal(SIGSTOP);
  for (int i = 0; i < kProcesses; ++i) run_cuda_calls(dir_, kRepeat);
  serve->signal(SIGCONT);

  const std::uint64_t want = 2 + std::uint64_t{2} * kRepeat * kProcesses;
  EXPECT_TRUE(eventually([&] { return malloc_calls(port_) >= want; }));
  // A few ticks more: nothing is counted twice once the records left in the ring arrive.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(malloc_calls(port_), want) << serve->err();
  const std::string drops = metric("eacgm_ring_buffer_drops_total");
  ASSERT_FALSE(drops.empty());
  EXPECT_GT(std::stoull(drops), 0u) << "the ring buffer dropped nothing: the test proves nothing";
}

}  // namespace
}  // namespace eacgm::test
