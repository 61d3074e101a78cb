// The registry and the hub: each built-in analysis publishes exactly the parts it
// declares and no two declare the same part; an analysis plugged in from outside gets
// only the inputs it declared and its part reaches the snapshot; snapshot parts are
// shared, and a part edited in a copy leaves the original alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <typeindex>

#include "../common/cuda_probe.h"
#include "analysis/call_summary.h"
#include "analysis/live_analysis.h"
#include "analysis/memory_ledger.h"

namespace eacgm::analysis {
namespace {

using test::cuda_probe;

TEST(Registry, EveryBuiltInPublishesWhatItDeclaresAndNoPartTwice) {
  LiveAnalysis live;
  live.set_process_alive([](std::uint32_t) { return true; });
  GpuSnapshot pass;
  pass.devices.resize(1);
  live.on_gpu(pass);  // so the last pass is published too
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  auto snap = live.snapshot();
  ASSERT_NE(snap, nullptr);

  std::set<std::type_index> declared;
  for (const Declaration& d : live.declarations()) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.parts.empty()) << d.name << " publishes nothing";
    for (const std::type_index& t : d.parts) {
      EXPECT_TRUE(declared.insert(t).second) << t.name() << " is declared twice (again by " << d.name << ")";
    }
  }
  const auto published = snap->parts.types();
  EXPECT_EQ(std::set<std::type_index>(published.begin(), published.end()), declared);
  EXPECT_EQ(published.size(), declared.size()) << "a part put twice in one snapshot";
  EXPECT_GE(live.declarations().size(), 16u);
}

// A count of what reaches it, to see the hub's dispatch.
struct Seen {
  std::size_t calls = 0;
  std::size_t gpu = 0;
  std::size_t ticks = 0;
  bool final = false;
};

class Counting final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"counting", Input::kCalls | Input::kTick, {typeid(Seen)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { seen_.calls += calls.size(); }
  void on_gpu(const GpuSnapshot&) override { ++seen_.gpu; }  // not declared: never called
  void on_tick(const Moment&) override { ++seen_.ticks; }
  void publish(SnapshotParts& parts, const Moment&, bool final) override {
    seen_.final = final;
    parts.put(seen_);
  }

 private:
  Seen seen_;
};

std::unique_ptr<Analysis> make_counting(const Environment&) { return std::make_unique<Counting>(); }

TEST(Registry, AnAnalysisPluggedInGetsOnlyItsInputsAndPublishes) {
  static constexpr AnalysisFactory kOne[] = {make_counting};
  LiveAnalysis live(kOne);
  ASSERT_EQ(live.declarations().size(), 1u);
  CallEvent call;
  call.probe = cuda_probe("cudaMalloc");
  call.pid = 5;
  live.on_calls(std::vector<CallEvent>(3, call));
  live.on_gpu(GpuSnapshot{});
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  live.on_end(CounterValues{});

  auto snap = live.snapshot();
  ASSERT_NE(snap, nullptr);
  ASSERT_NE(snap->find<Seen>(), nullptr);
  EXPECT_EQ(snap->get<Seen>().calls, 3u);
  EXPECT_EQ(snap->get<Seen>().gpu, 0u) << "GPU passes were not declared";
  EXPECT_EQ(snap->get<Seen>().ticks, 1u) << "the end is not a tick";
  EXPECT_TRUE(snap->get<Seen>().final);
  EXPECT_TRUE(snap->get<CallSummary>().rows().empty()) << "no built-in analysis ran";
  EXPECT_EQ(snap->find<CallSummary>(), nullptr);
}

TEST(SnapshotParts, AbsentPartsReadEmptyAndEditsCopyOnWrite) {
  AnalysisSnapshot snap;
  EXPECT_EQ(snap.find<MemorySummary>(), nullptr);
  EXPECT_TRUE(snap.get<MemorySummary>().rows.empty());
  EXPECT_EQ(snap.share<MemorySummary>(), nullptr);

  snap.edit<MemorySummary>().leaks_total = 3;
  const AnalysisSnapshot copy = snap;  // shares the part
  EXPECT_EQ(copy.find<MemorySummary>(), snap.find<MemorySummary>());
  snap.edit<MemorySummary>().leaks_total = 7;
  EXPECT_EQ(snap.get<MemorySummary>().leaks_total, 7u);
  EXPECT_EQ(copy.get<MemorySummary>().leaks_total, 3u) << "the copy keeps its part";
  EXPECT_EQ(snap.parts.size(), 1u);
}

}  // namespace
}  // namespace eacgm::analysis
