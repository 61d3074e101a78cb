// CallBatcher: calls reach the consumer in record order, in batches of at most kBatch,
// calls kept by a stage are left out, calls a stage made follow the record that made
// them, hints never take a slot.
#include "ingest/call_batcher.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bpf/events.h"
#include "core/clock.h"

namespace eacgm::ingest {
namespace {

eacgm_record record(std::uint32_t probe_id, std::uint32_t pid, std::uint64_t arg0) {
  eacgm_record r{};
  r.type = EACGM_REC_CALL;
  r.flags = EACGM_REC_HAS_EXIT;
  r.ts_ns = monotonic_ns();
  r.pid = pid;
  r.tid = pid;
  r.probe_id = probe_id;
  r.args[0] = arg0;
  std::strcpy(r.comm, "prog");
  return r;
}

struct Collect final : Consumer {
  std::vector<std::size_t> batch_sizes;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> calls;  // pid, args[0]
  void on_calls(std::span<const CallEvent> batch) override {
    batch_sizes.push_back(batch.size());
    for (const auto& e : batch) calls.emplace_back(e.pid, e.args[0]);
  }
};

// Keeps calls of pid 7 and makes a call of pid 700 (args[0] copied) for each.
class KeepAndMake final : public Enricher {
 public:
  std::string_view name() const override { return "keep"; }
  bool enrich(CallEvent& e, CallOut& out) override {
    if (e.pid != 7) return true;
    CallEvent made = e;
    made.pid = 700;
    out.emit(made);
    return false;
  }
  void forget(std::uint32_t) override {}
  std::vector<std::uint32_t> pids() const override { return {}; }
  void register_counters(CounterRegistry&) override {}
};

class CallBatcherTest : public ::testing::Test {
 protected:
  CallBatcherTest() {
    ProbeInfo info;
    info.function = "f";
    info.spec.name = "f";
    info.spec.domain = "test";
    id_ = table_.add(std::move(info))->id;
  }
  probe::ProbeTable table_;
  std::uint32_t id_ = 0;
};

TEST_F(CallBatcherTest, BatchesInOrderAndFlushesTheRest) {
  auto sink = std::make_shared<Collect>();
  CallBatcher b(table_, EnricherChain{}, sink);
  const std::size_t n = CallBatcher::kBatch * 2 + 10;
  for (std::size_t i = 0; i < n; ++i) {
    auto r = record(id_, 1, i);
    ASSERT_EQ(b.add(&r, sizeof(r)), RecordKind::kCall);
  }
  EXPECT_EQ(sink->batch_sizes, (std::vector<std::size_t>{CallBatcher::kBatch, CallBatcher::kBatch}));
  b.flush();
  b.flush();  // nothing left: no empty batch
  EXPECT_EQ(sink->batch_sizes.back(), 10u);
  EXPECT_EQ(sink->batch_sizes.size(), 3u);
  ASSERT_EQ(sink->calls.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(sink->calls[i].second, i);
  EXPECT_EQ(b.counters().calls, n);
}

TEST_F(CallBatcherTest, KeptCallsLeaveNoGapAndMadeCallsFollowTheirRecord) {
  auto sink = std::make_shared<Collect>();
  EnricherChain chain;
  chain.add(std::make_unique<KeepAndMake>());
  CallBatcher b(table_, std::move(chain), sink);
  const std::vector<std::uint32_t> pids = {1, 7, 2, 7, 7, 3};
  for (std::size_t i = 0; i < pids.size(); ++i) {
    auto r = record(id_, pids[i], i);
    b.add(&r, sizeof(r));
  }
  eacgm_record hint{};
  hint.type = EACGM_REC_EXEC;
  hint.pid = 99;
  EXPECT_EQ(b.add(&hint, EACGM_REC_SIZE_NO_STR), RecordKind::kExecHint);
  EXPECT_EQ(b.last().pid, 99u);
  b.flush();
  EXPECT_EQ(sink->calls, (std::vector<std::pair<std::uint32_t, std::uint64_t>>{
                             {1, 0}, {700, 1}, {2, 2}, {700, 3}, {700, 4}, {3, 5}}));
}

}  // namespace
}  // namespace eacgm::ingest
