// EnricherChain: stage order, kept events, calls made by a stage going through the
// later stages only, forget and forget_unless, counters of the built-in stages.
#include "ingest/enricher.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ingest/enricher_stages.h"

namespace eacgm::ingest {
namespace {

class Tag final : public Enricher {
 public:
  explicit Tag(std::string tag, std::set<std::uint32_t>* forgotten = nullptr)
      : tag_(std::move(tag)), forgotten_(forgotten) {}
  std::string_view name() const override { return tag_; }
  bool enrich(CallEvent& e, CallOut&) override {
    e.kernel += tag_;
    pids_.insert(e.pid);
    return true;
  }
  void forget(std::uint32_t pid) override {
    pids_.erase(pid);
    if (forgotten_) forgotten_->insert(pid);
  }
  std::vector<std::uint32_t> pids() const override { return {pids_.begin(), pids_.end()}; }
  void register_counters(CounterRegistry&) override {}

 private:
  std::string tag_;
  std::set<std::uint32_t> pids_;
  std::set<std::uint32_t>* forgotten_;
};

// Keeps calls of pid 1 and makes a call of pid 100 for each one kept.
class Keeper final : public Enricher {
 public:
  std::string_view name() const override { return "keeper"; }
  bool enrich(CallEvent& e, CallOut& out) override {
    if (e.pid != 1) return true;
    CallEvent made;
    made.pid = 100;
    made.kernel = "made";
    out.emit(made);
    return false;
  }
  void forget(std::uint32_t) override {}
  std::vector<std::uint32_t> pids() const override { return {}; }
  void register_counters(CounterRegistry&) override {}
};

class Collect final : public CallSink {
 public:
  void take(CallEvent& e) override { got.push_back({e.pid, e.kernel}); }
  std::vector<std::pair<std::uint32_t, std::string>> got;
};

EnricherChain three_stages(std::set<std::uint32_t>* forgotten = nullptr) {
  EnricherChain chain;
  chain.add(std::make_unique<Tag>("A", forgotten));
  chain.add(std::make_unique<Keeper>());
  chain.add(std::make_unique<Tag>("C"));
  return chain;
}

TEST(EnricherChain, StagesRunInOrderAndMadeCallsSkipEarlierStages) {
  EnricherChain chain = three_stages();  // moved: the outlets must follow the chain
  Collect sink;
  CallEvent e;
  e.pid = 2;
  chain.process(e, sink);
  e = CallEvent{};
  e.pid = 1;
  chain.process(e, sink);
  ASSERT_EQ(sink.got.size(), 2u);
  EXPECT_EQ(sink.got[0], (std::pair<std::uint32_t, std::string>{2, "AC"}));
  EXPECT_EQ(sink.got[1], (std::pair<std::uint32_t, std::string>{100, "madeC"}));
  EXPECT_EQ(chain.size(), 3u);
}

TEST(EnricherChain, ForgetsProcessesThatAreNotAlive) {
  std::set<std::uint32_t> forgotten;
  EnricherChain chain = three_stages(&forgotten);
  Collect sink;
  for (std::uint32_t pid : {5u, 6u, 7u}) {
    CallEvent e;
    e.pid = pid;
    chain.process(e, sink);
  }
  EXPECT_EQ(chain.forget_unless([](std::uint32_t pid) { return pid == 6; }), 2u);
  EXPECT_EQ(forgotten, (std::set<std::uint32_t>{5, 7}));
  chain.forget(6);
  EXPECT_EQ(forgotten, (std::set<std::uint32_t>{5, 6, 7}));
  EXPECT_EQ(chain.forget_unless([](std::uint32_t) { return false; }), 0u);
}

TEST(EnricherStages, BuiltInStagesDeclareTheirCounters) {
  EnricherChain chain;
  chain.add(make_nccl_comm_stage());
  chain.add(make_kernel_name_stage());
  chain.add(make_python_pairing_stage(""));
  CounterRegistry registry;
  chain.register_counters(registry);
  auto values = registry.read();
  for (const char* key :
       {"names_from_memory", "names_unreadable", "python_calls", "python_unpaired", "python_filtered",
        "python_unreturned", "python_orphan_returns", "nccl_comm_evictions"}) {
    EXPECT_TRUE(values.has(key)) << key;
  }
  // All zero: the optional groups stay off the accounting line.
  EXPECT_EQ(values.accounting_line(), "");
  // A call that no stage knows passes through unchanged.
  Collect sink;
  CallEvent e;
  e.pid = 9;
  chain.process(e, sink);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].first, 9u);
}

}  // namespace
}  // namespace eacgm::ingest
