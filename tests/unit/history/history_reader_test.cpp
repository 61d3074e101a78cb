// HistoryReader's pool: a query held up in the store never holds up another, connections
// stay within their bound (a query past it waits for one to come back), and a connection
// that failed a query is closed so the next query opens a fresh one.
#include "history/history_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace eacgm::history {
namespace {

using namespace std::chrono_literals;

// A store whose process lists wait while `hold` is set, and fail while `fail` is.
struct Gate {
  std::atomic<bool> hold{false};
  std::atomic<bool> fail{false};
  std::atomic<int> opened{0};
};

class GatedStore final : public Store {
 public:
  explicit GatedStore(Gate& gate) : gate_(gate) {}
  Status write(const std::string&, const IntervalBatch&) override { return {}; }
  Status maintain(const std::string&, std::int64_t, const Retention&) override { return {}; }
  Result<ProcessPage> processes(const HistoryQuery&, Tier) override {
    while (gate_.hold) std::this_thread::sleep_for(1ms);
    if (gate_.fail) return make_error("connection lost");
    return ProcessPage{};
  }
  Result<Page<StoredJob>> jobs(const HistoryQuery&, Tier) override { return Page<StoredJob>{}; }
  Result<std::vector<HeldGpuRow>> held_gpus(const HistoryQuery&, const JobSelector&, Tier) override {
    return std::vector<HeldGpuRow>{};
  }
  Result<JobTimeRows> job_time_rows(const HistoryQuery&, const JobSelector&, Tier) override {
    return JobTimeRows{};
  }
  Result<Page<StoredNode>> nodes(const HistoryQuery&, Tier) override { return Page<StoredNode>{}; }
  Result<std::vector<StoredFunction>> functions(const HistoryQuery&, Tier) override {
    return std::vector<StoredFunction>{};
  }
  Result<std::vector<StoredKernel>> kernels(const HistoryQuery&, Tier) override {
    return std::vector<StoredKernel>{};
  }
  Result<std::vector<StoredGpuPoint>> gpus(const HistoryQuery&, Tier) override {
    return std::vector<StoredGpuPoint>{};
  }
  Result<Page<StoredAnomaly>> anomalies(const HistoryQuery&) override { return Page<StoredAnomaly>{}; }
  Result<Page<StoredLeak>> leaks(const HistoryQuery&) override { return Page<StoredLeak>{}; }
  Result<std::uint64_t> size_bytes() override { return std::uint64_t{0}; }
  std::string description() const override { return "gated"; }

 private:
  Gate& gate_;
};

HistoryReader::Opener opener(Gate& gate) {
  return [&gate](const std::string&) -> Result<std::unique_ptr<Store>> {
    ++gate.opened;
    return std::unique_ptr<Store>(std::make_unique<GatedStore>(gate));
  };
}

Result<ProcessPage> list(HistoryReader& reader) {
  return reader.query<ProcessPage>(HistoryQuery{},
                                   [](Store& s, Tier t) { return s.processes(HistoryQuery{}, t); });
}
Result<Page<StoredJob>> jobs(HistoryReader& reader) {
  return reader.query<Page<StoredJob>>(HistoryQuery{},
                                       [](Store& s, Tier t) { return s.jobs(HistoryQuery{}, t); });
}

TEST(HistoryReader, ASlowQueryHoldsUpNoOther) {
  Gate gate;
  HistoryReader reader("gated:", Retention{}, 4, opener(gate));
  gate.hold = true;
  auto slow = std::async(std::launch::async, [&] { return list(reader); });
  while (reader.connections() == 0) std::this_thread::sleep_for(1ms);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(jobs(reader));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_EQ(slow.wait_for(0s), std::future_status::timeout);  // still held up
  gate.hold = false;
  ASSERT_TRUE(slow.get());
  EXPECT_EQ(reader.connections(), 2u);
  ASSERT_TRUE(jobs(reader));  // an idle connection is used again
  EXPECT_EQ(gate.opened, 2);
}

TEST(HistoryReader, QueriesPastTheBoundWaitForAConnection) {
  Gate gate;
  HistoryReader reader("gated:", Retention{}, 1, opener(gate));
  gate.hold = true;
  auto first = std::async(std::launch::async, [&] { return list(reader); });
  while (reader.connections() == 0) std::this_thread::sleep_for(1ms);
  auto second = std::async(std::launch::async, [&] { return jobs(reader); });
  EXPECT_EQ(second.wait_for(50ms), std::future_status::timeout);
  gate.hold = false;
  ASSERT_TRUE(first.get());
  ASSERT_TRUE(second.get());
  EXPECT_EQ(reader.connections(), 1u);
  EXPECT_EQ(gate.opened, 1);
}

TEST(HistoryReader, AFailedConnectionIsClosedAndTheNextQueryOpensAnother) {
  Gate gate;
  HistoryReader reader("gated:", Retention{}, 4, opener(gate));
  gate.fail = true;
  auto failed = list(reader);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error(), "connection lost");
  EXPECT_EQ(reader.connections(), 0u);
  gate.fail = false;
  ASSERT_TRUE(list(reader));
  EXPECT_EQ(gate.opened, 2);
  EXPECT_EQ(reader.connections(), 1u);
}

}  // namespace
}  // namespace eacgm::history
