// BudgetController on synthetic counts: estimates per process from trap counts and CPU
// time, sample shifts raised for the costliest timed probes when a process is over
// budget (as far as the entry traps allow), lowered again when all are well within,
// and everything forwarded unchanged.
#include "agent/budget_controller.h"

#include <gtest/gtest.h>

#include <map>

namespace eacgm::agent {
namespace {

struct Recorder final : Consumer {
  std::uint64_t counted = 0, timed = 0, calls = 0, ticks = 0, ends = 0, waits = 0;
  std::vector<OverheadReport> reports;
  void on_calls(std::span<const CallEvent> c) override { calls += c.size(); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override {
    for (const auto& c : counts) counted += c.calls;
    for (const auto& t : timings) timed += t.count;
  }
  void on_overhead(const OverheadReport& r) override { reports.push_back(r); }
  void on_host_waits(std::span<const HostWaitProcess> p, std::span<const HostWaitTimings> w) override {
    waits += p.size() + w.size();
  }
  void on_tick(std::chrono::steady_clock::time_point, const CounterValues&) override { ++ticks; }
  void on_end(const CounterValues&) override { ++ends; }
};

std::shared_ptr<const ProbeInfo> probe(std::uint32_t id) {
  auto p = std::make_shared<ProbeInfo>();
  p->id = id;
  p->function = "f" + std::to_string(id);
  p->counted = true;
  return p;
}

TrapCosts costs() {
  TrapCosts c;
  c.entry_ns = 500;
  c.entry_return_ns = 1500;  // a timed call: 1000 ns more
  c.per_call_ns = 2000;
  c.measured = true;
  return c;
}

struct Fixture {
  std::shared_ptr<Recorder> inner = std::make_shared<Recorder>();
  std::map<std::uint32_t, double> cpu;  // pid -> CPU ns so far (absent: exited)
  std::map<std::uint32_t, std::uint8_t> applied;
  std::unique_ptr<BudgetController> c;
  std::shared_ptr<const ProbeInfo> p1 = probe(1), p2 = probe(2);

  explicit Fixture(BudgetOptions o = BudgetOptions{}) {
    // Every process started after the controller (start 10 > since 5).
    c = std::make_unique<BudgetController>(
        inner, costs(), o,
        [this](std::uint32_t pid) -> std::optional<ProcessCpu> {
          auto it = cpu.find(pid);
          if (it == cpu.end()) return std::nullopt;
          return ProcessCpu{it->second, 10};
        },
        5);
    c->set_actuator([this](std::uint32_t id, std::uint8_t shift) -> Status {
      applied[id] = shift;
      return {};
    });
  }
  // One second of a process: `calls` counted per probe, `timed` of them timed, and
  // `cpu_ms` of CPU time.
  void second(std::uint32_t pid, double cpu_ms, std::uint64_t calls1, std::uint64_t timed1,
              std::uint64_t calls2 = 0, std::uint64_t timed2 = 0) {
    cpu[pid] += cpu_ms * 1e6;
    std::vector<CallCount> counts{{pid, p1, 0, 0, "", calls1, 0}, {pid, p2, 0, 0, "", calls2, 0}};
    std::vector<CallTimings> timings{{pid, p1, 10, timed1, 0, 0}, {pid, p2, 10, timed2, 0, 0}};
    c->on_counts(counts, timings);
  }
  // Ticks one simulated second apart.
  std::chrono::steady_clock::time_point now{};
  void tick() {
    now += std::chrono::seconds(1);
    c->on_tick(now, CounterValues{});
  }
};

TEST(BudgetController, EstimatesEachProcessAndForwardsEverything) {
  Fixture f;
  f.cpu[7] = 0;
  f.tick();  // the first CPU reading
  // 1000 counted calls (0.5 ms), 10 timed (+0.01 ms) in 1 s of 1000 ms CPU: 0.05%.
  f.second(7, 1000, 1000, 10);
  f.tick();
  ASSERT_EQ(f.inner->reports.size(), 2u);
  const OverheadReport& r = f.inner->reports.back();
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.processes[0].estimated_ns, 1000 * 500.0 + 10 * 1000.0);
  EXPECT_DOUBLE_EQ(r.processes[0].cpu_ns, 1000e6);
  EXPECT_NEAR(r.processes[0].ratio, 510e3 / (1000e6 - 510e3), 1e-9);
  EXPECT_EQ(r.over_budget, 0u);
  EXPECT_TRUE(f.applied.empty());
  EXPECT_EQ(f.inner->counted, 1000u);
  EXPECT_EQ(f.inner->timed, 10u);
  EXPECT_EQ(f.inner->ticks, 2u);
}

TEST(BudgetController, ForwardsHostWaits) {
  Fixture f;
  f.c->on_host_waits(std::vector<HostWaitProcess>(1), std::vector<HostWaitTimings>(3));
  EXPECT_EQ(f.inner->waits, 4u);
}

TEST(BudgetController, TimesTheCostliestProbeLessOftenUntilTheEstimateFits) {
  Fixture f;
  f.cpu[7] = 0;
  f.tick();
  // 150 ms CPU, 1% of its own ~148 ms is 1.48 ms; entries 2000 x 0.5 us = 1 ms fit, but
  // probe 1's 800 timed returns (0.8 ms) and probe 2's 100 (0.1 ms) do not.
  f.second(7, 150, 1000, 800, 1000, 100);
  f.tick();
  const OverheadReport& r = f.inner->reports.back();
  EXPECT_EQ(r.over_budget, 1u);
  EXPECT_EQ(r.at_entry_floor, 0u);
  ASSERT_TRUE(f.applied.count(1));
  EXPECT_GT(f.applied[1], 4) << "probe 1 (most returns) is timed less often";
  // What is left after the change fits: entries 1 ms + returns halved per step.
  double returns =
      0.8e6 / (1 << (f.applied[1] - 4)) + 0.1e6 / (1 << ((f.applied.count(2) ? f.applied[2] : 4) - 4));
  EXPECT_LE(1e6 + returns, 0.01 * (150e6 - r.processes[0].estimated_ns) + 1e-6);
  EXPECT_EQ(f.c->raises(), f.applied.size());
}

TEST(BudgetController, OverOnEntriesAloneGoesToTheSparsestTiming) {
  BudgetOptions o;
  o.max_shift = 12;
  Fixture f(o);
  f.cpu[7] = 0;
  f.tick();
  // 100k counted calls: 50 ms of probes in 100 ms of CPU.
  f.second(7, 100, 100000, 1000);
  f.tick();
  const OverheadReport& r = f.inner->reports.back();
  EXPECT_EQ(r.at_entry_floor, 1u);
  EXPECT_EQ(f.applied[1], 12);
  EXPECT_EQ(r.max_sample_shift, 12);
  EXPECT_EQ(r.reduced_probes, 1u);
}

TEST(BudgetController, APinnedProbeKeepsItsTiming) {
  BudgetOptions o;
  o.is_pinned = [](const ProbeInfo& p) { return p.function == "f1"; };
  Fixture f(o);
  f.cpu[7] = 0;
  f.tick();
  // As in TimesTheCostliestProbeLessOften..., but probe 1 (most returns) is pinned: only
  // probe 2 can be timed less often, down to the cap, and the process stays over.
  f.second(7, 150, 1000, 800, 1000, 100);
  f.tick();
  const OverheadReport& r = f.inner->reports.back();
  EXPECT_EQ(r.over_budget, 1u);
  EXPECT_FALSE(f.applied.count(1)) << "the pinned probe is never changed";
  ASSERT_TRUE(f.applied.count(2));
  EXPECT_EQ(f.applied[2], 16);
  EXPECT_EQ(r.pinned_probes, 1u);
  EXPECT_EQ(r.reduced_probes, 1u);
}

TEST(BudgetController, LowersAgainAfterAWindowWellWithinBudget) {
  BudgetOptions o;
  o.window_ticks = 3;
  Fixture f(o);
  f.cpu[7] = 0;
  f.tick();
  f.second(7, 100, 100000, 1000);
  f.tick();
  const std::uint8_t raised = f.applied[1];
  ASSERT_GT(raised, 4);
  // Then the process calls little: after the window has forgotten the busy second and
  // three calm ticks have passed, one step down.
  for (int i = 0; i < 8 && f.c->lowers() == 0; ++i) {
    f.second(7, 1000, 10, 0);
    f.tick();
  }
  EXPECT_EQ(f.c->lowers(), 1u);
  EXPECT_EQ(f.applied[1], raised - 1);
}

TEST(BudgetController, AProcessesOtherThreadsDoNotDiluteItsRatio) {
  Fixture f;
  f.cpu[7] = 0;
  f.tick();
  // 8 threads busy for 1 s (8000 ms CPU), the probes' 20 ms on its launching thread:
  // 20 / (1000 - 20), not 20 / 7980.
  f.second(7, 8000, 40000, 0);
  f.tick();
  EXPECT_NEAR(f.inner->reports.back().processes[0].ratio, 20.0 / 980.0, 1e-9);
}

TEST(BudgetController, ExitedProcessIsReportedOnceWithItsTotals) {
  Fixture f;
  f.cpu[7] = 0;
  f.tick();
  f.second(7, 1000, 1000, 0);
  f.tick();
  f.cpu.erase(7);
  f.tick();
  const OverheadReport& r = f.inner->reports.back();
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_TRUE(r.processes[0].exited);
  EXPECT_DOUBLE_EQ(r.processes[0].total_estimated_ns, 1000 * 500.0);
  f.tick();
  EXPECT_TRUE(f.inner->reports.back().processes.empty()) << "forgotten after its last report";
}

TEST(BudgetController, WithoutCalibrationItOnlyCountsAndNeverActs) {
  auto inner = std::make_shared<Recorder>();
  std::map<std::uint32_t, std::uint8_t> applied;
  BudgetController c(
      inner, TrapCosts{}, BudgetOptions{},
      [](std::uint32_t) {
        return std::optional<ProcessCpu>(ProcessCpu{1e6, 0});
      },
      5);
  c.set_actuator([&](std::uint32_t id, std::uint8_t s) -> Status {
    applied[id] = s;
    return {};
  });
  auto p = probe(1);
  std::vector<CallCount> counts{{7, p, 0, 0, "", 1000000, 0}};
  c.on_counts(counts, {});
  c.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  c.on_end(CounterValues{});
  EXPECT_TRUE(applied.empty());
  EXPECT_EQ(inner->counted, 1000000u);
  EXPECT_EQ(inner->ends, 1u);
  EXPECT_EQ(inner->reports.size(), 2u);
}

}  // namespace
}  // namespace eacgm::agent
