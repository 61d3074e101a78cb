// The hook's GPU-time bookkeeping: the launch table (exact counts, NCCL names, a full
// table), the adaptive 1-in-N rate, the per-function plan over a simulated short run, and
// the buckets of the host waits it times.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bpf/events.h"
#include "govern/hookcore/gpu_time_settings.h"
#include "govern/hookcore/launch_table.h"
#include "govern/hookcore/sample_rate.h"
#include "govern/hookcore/stream_hold.h"
#include "govern/hookcore/wait_buckets.h"

namespace eacgm::govern {
namespace {

// choose_launch with no launch in place of another (the simulations before idle starts).
bool time_launch(std::uint64_t n, std::uint64_t function, bool nccl, std::uint32_t planned,
                 std::uint32_t fallback, std::atomic<std::int32_t>& left) {
  std::atomic<std::int32_t> none{0};
  return choose_launch(n, function, nccl, planned, fallback, left, none) != LaunchTiming::kUntimed;
}

TEST(LaunchTable, CountsEachFunctionExactlyAcrossThreads) {
  static LaunchTable table;  // large: not on the stack
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 10000; ++i) {
        LaunchEntry* e = table.find_or_insert(0x1000 + 0x40 * static_cast<std::uintptr_t>(i % 10));
        ASSERT_NE(e, nullptr);
        e->launches.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  int functions = 0;
  table.for_each([&](LaunchEntry& e) {
    ++functions;
    EXPECT_EQ(e.launches.load(), 4000u) << std::hex << e.key.load();
  });
  EXPECT_EQ(functions, 10);
  EXPECT_EQ(table.find_or_insert(0), nullptr);
}

TEST(LaunchTable, AFullTableRefusesNewFunctions) {
  static LaunchTable table;
  std::size_t inserted = 0;
  for (std::uintptr_t k = 1; k <= 2 * kLaunchTableSize; ++k)
    inserted += table.find_or_insert(k << 4) != nullptr;
  EXPECT_LE(inserted, kLaunchTableSize);
  EXPECT_GE(inserted, kLaunchTableSize * 9 / 10) << "linear probing fills most of the table";
  table.clear();
  EXPECT_NE(table.find_or_insert(0x10), nullptr);
}

TEST(LaunchTable, NcclKernelNames) {
  EXPECT_TRUE(is_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(is_nccl_kernel_name("_Z28ncclKernel_AllGather_RING_LLP11ncclDevComm"));
  EXPECT_FALSE(is_nccl_kernel_name("_Z7kernelAPf"));
  EXPECT_FALSE(is_nccl_kernel_name(nullptr));
}

TEST(SampleRate, JumpsBackWithinBudgetAndHalvesWellUnder) {
  SampleRateConfig c;
  c.initial = 16;
  c.budget = 0.002;
  c.gpu_cost_ns = 1000;
  SampleRate rate(c);
  // 1 s in which 10,000 launches were timed at 2 us each on the CPU: 3%, 15 times the
  // 0.2% budget: 16 times rarer at once.
  EXPECT_EQ(rate.adapt(1'000'000'000, 10'000, 20'000'000), 256u);
  // Just over (0.3%): twice rarer.
  EXPECT_EQ(rate.adapt(1'000'000'000, 1'000, 2'000'000), 512u);
  // 100 timed launches at 3 us in all: 0.03% < 0.05%: back down.
  EXPECT_EQ(rate.adapt(1'000'000'000, 100, 200'000), 256u);
  // In between: kept.
  EXPECT_EQ(rate.adapt(1'000'000'000, 500, 500'000), 256u);
  EXPECT_EQ(rate.adapt(0, 1, 1), 256u) << "no time passed: nothing learnt";
  // Far over: at most 64 times rarer in one step.
  EXPECT_EQ(rate.adapt(1'000'000, 1'000'000, 1'000'000'000), 16384u);
}

TEST(SampleRate, StaysWithinItsBounds) {
  SampleRateConfig c;
  c.initial = 4;
  c.min_every = 2;
  c.max_every = 8;
  SampleRate rate(c);
  for (int i = 0; i < 5; ++i) rate.adapt(1'000'000, 1'000'000, 1'000'000'000);
  EXPECT_EQ(rate.every(), 8u);
  for (int i = 0; i < 5; ++i) rate.adapt(1'000'000'000'000, 0, 0);
  EXPECT_EQ(rate.every(), 2u);
}

// One launch in each block of `every`, the first always, and never in step with a period
// of the program: a kernel launched in four shapes per step has each shape timed.
TEST(SampleLaunch, OnePerBlockAtOffsetsThatDoNotFollowTheProgramsPeriod) {
  for (std::uint32_t every : {2u, 16u, 32u}) {
    std::uint64_t timed = 0;
    std::uint64_t in_block = 0;
    std::uint64_t per_shape[4] = {};
    for (std::uint64_t n = 0; n < 64ull * every; ++n) {
      const bool t = sample_launch(n, 0x7f0012345600, every);
      if (n == 0) {
        EXPECT_TRUE(t);
      }
      in_block += t ? 1 : 0;
      if ((n + 1) % every == 0) {
        EXPECT_EQ(in_block, 1u) << "every " << every << " block " << n / every;
        in_block = 0;
      }
      timed += t ? 1 : 0;
      if (t) ++per_shape[n % 4];
    }
    EXPECT_EQ(timed, 64u) << every;
    // A fixed 1 in `every` (a multiple of 4 here but for 2) would time one shape only.
    if (every % 4 == 0) {
      for (auto c : per_shape) EXPECT_GE(c, 6u) << "every " << every;
    }
  }
  EXPECT_TRUE(sample_launch(5, 1, 1));
  EXPECT_TRUE(sample_launch(5, 1, 0));
}

// One kernel name and launch shape serving two problem sizes launched alternately (10 and
// 30 us): whatever the 1 in N, the timed launches are half of each, so the timed mean is
// the true 20 us. A fixed 1 in an even N would time only one of the two.
TEST(SampleLaunch, TwoAlternatingSizesGiveAnUnbiasedMean) {
  for (std::uint32_t every : {2u, 3u, 4u, 7u, 16u, 37u, 1024u, 32768u}) {
    for (std::uint64_t function : {0x7f0012345600ull, 0x7f0012345640ull, 0x55550000a000ull}) {
      const std::uint64_t blocks = every >= 1024 ? 1500 : 4000;
      double sum = 0;
      std::uint64_t timed = 0;
      for (std::uint64_t n = 1; n < blocks * every; ++n) {
        if (!sample_launch(n, function, every)) continue;
        sum += n % 2 == 0 ? 10'000 : 30'000;
        ++timed;
      }
      ASSERT_GT(timed, blocks - 2) << every;
      const double mean = sum / static_cast<double>(timed);
      // The share of the 30 us size is binomial: 4.5 standard errors of it at most.
      const double bound = 20'000 * 4.5 * 0.5 / std::sqrt(static_cast<double>(timed));
      EXPECT_NEAR(mean, 20'000, bound) << "1 in " << every << " of " << std::hex << function;
    }
  }
  // The same when N changes from one period to the next, as the plan does.
  double sum = 0;
  std::uint64_t timed = 0;
  std::uint64_t n = 1;
  for (int period = 0; period < 2000; ++period) {
    const std::uint32_t every = 2 + static_cast<std::uint32_t>(period % 5) * 2;
    for (std::uint64_t end = n + 64; n < end; ++n) {
      if (!sample_launch(n, 0x7f00deadbe00, every)) continue;
      sum += n % 2 == 0 ? 10'000 : 30'000;
      ++timed;
    }
  }
  EXPECT_NEAR(sum / static_cast<double>(timed), 20'000,
              20'000 * 4.5 * 0.5 / std::sqrt(static_cast<double>(timed)));
}

// A short training run, simulated launch by launch: 4 s at 65 steps a second, 26 kernels of
// 25 to 200 us (16 launched once a step, 10 twice) and 30 of 5 us (three times a step),
// after a warm-up of 0.3 s in which 400 kernels run 50 times each (autotuning). Each timed
// launch costs its thread 3 us and the GPU the 4.3 us allowance; the budget is 0.2%.
struct SimulatedRun {
  std::vector<std::uint64_t> timed;  // per kernel, its first launch left out
  std::vector<std::uint64_t> launches;
  double cost_ns = 0;
  double cost_after_first_plan_ns = 0;
  double seconds = 4;
};

constexpr int kLongKernels = 26;
constexpr int kShortKernels = 30;
constexpr int kWarmupKernels = 400;
constexpr double kCpuCostNs = 3000;

// `planned`: the hook's per-function plan 100 ms in and every 250 ms after; otherwise the
// rate alone, adapted once a second, as the hook did before.
SimulatedRun simulate_short_run(bool planned) {
  SampleRateConfig c;
  const int kernels = kLongKernels + kShortKernels + kWarmupKernels;
  SimulatedRun run;
  run.timed.assign(kernels, 0);
  run.launches.assign(kernels, 0);
  std::vector<double> mean_ns(kernels), sum_ns(kernels, 0);
  std::vector<std::uint64_t> count(kernels, 0), planned_at(kernels, 0);
  std::vector<FunctionPlan> plan(kernels, FunctionPlan{0, kUnplannedQuota});
  std::vector<std::atomic<std::int32_t>> left(kernels);  // the launch table's caps
  for (auto& l : left) l.store(kUnplannedQuota);
  std::vector<FunctionDemand> demand(kernels);
  std::vector<std::uint32_t> scratch(kernels);
  for (int k = 0; k < kernels; ++k) {
    mean_ns[k] = k < kLongKernels ? 25'000 + 7'000.0 * k : 5'000;
  }
  SampleRate rate(c);
  SamplePlanner planner(c);
  std::uint64_t period_ns = planned ? kFirstPlanNs : 1'000'000'000;
  std::uint64_t next_period = period_ns, timed_in_period = 0;
  double cost_in_period = 0;
  bool plan_made = false;
  auto launch = [&](int k) {
    const std::uint64_t n = run.launches[k]++;
    const std::uint64_t key = 0x7f0000100000ull + 0x40ull * static_cast<std::uint64_t>(k);
    if (planned ? !time_launch(n, key, false, plan[k].every, rate.every(), left[k])
                : !sample_launch(n, key, rate.every()))
      return;
    if (n != 0) {
      ++run.timed[k];
      sum_ns[k] += mean_ns[k];
      ++count[k];
    }
    ++timed_in_period;
    const double cost = kCpuCostNs + static_cast<double>(c.gpu_cost_ns);
    cost_in_period += cost;
    run.cost_ns += cost;
    if (plan_made) run.cost_after_first_plan_ns += cost;
  };
  auto end_period = [&] {
    const auto cpu = static_cast<std::uint64_t>(static_cast<double>(timed_in_period) * kCpuCostNs);
    rate.adapt(period_ns, timed_in_period, cpu);
    if (planned) {
      planner.settle(period_ns, timed_in_period, cost_in_period);
      for (int k = 0; k < kernels; ++k) {
        demand[k] = FunctionDemand{run.launches[k] - planned_at[k], count[k] > 0 ? sum_ns[k] / count[k] : 0,
                                   false, 1, count[k]};
        planned_at[k] = run.launches[k];
      }
      planner.plan(demand.data(), plan.data(), scratch.data(), demand.size());
      for (int k = 0; k < kernels; ++k) left[k].store(plan[k].quota);
      plan_made = true;
      period_ns = kPlanEveryNs;
    }
    timed_in_period = 0;
    cost_in_period = 0;
  };
  const std::uint64_t step_ns = 1'000'000'000 / 65;
  for (std::uint64_t t = 0; t < 4'000'000'000ull; t += step_ns) {
    while (t >= next_period) {
      end_period();
      next_period += period_ns;
    }
    if (t < 300'000'000) {
      // The warm-up: 400 kernels, 50 launches each over its 20 steps.
      for (int k = kLongKernels + kShortKernels; k < kernels; ++k) {
        for (int i = 0; i < 3; ++i) {
          if (run.launches[k] < 50) launch(k);
        }
      }
    }
    for (int k = 0; k < kLongKernels; ++k) {
      for (int i = 0; i < (k < 16 ? 1 : 2); ++i) launch(k);
    }
    for (int k = kLongKernels; k < kLongKernels + kShortKernels; ++k) {
      for (int i = 0; i < 3; ++i) launch(k);
    }
  }
  return run;
}

TEST(SamplePlanner, AShortRunTimesEveryLongKernelOftenWithinItsBudget) {
  const SimulatedRun run = simulate_short_run(true);
  const SampleRateConfig c;
  const double budget_ns = c.budget * run.seconds * 1e9;
  std::uint64_t fewest = ~0ull;
  for (int k = 0; k < kLongKernels; ++k) fewest = std::min(fewest, run.timed[k]);
  EXPECT_GE(fewest, 20u) << "every kernel of 25 us or more, 260 to 520 launches each";
  std::uint64_t fewest_short = ~0ull;
  for (int k = kLongKernels; k < kLongKernels + kShortKernels; ++k) {
    EXPECT_GE(run.timed[k], 10u) << "a short kernel, 780 launches: its first 10 samples at a full share";
    fewest_short = std::min(fewest_short, run.timed[k]);
  }
  // After the first plan the run keeps to its budget (plus one period's balance); the
  // warm-up before it is what the first launches and the unplanned quotas cost.
  EXPECT_LE(run.cost_after_first_plan_ns, budget_ns + c.budget * 0.25e9);
  EXPECT_GE(run.cost_after_first_plan_ns, 0.6 * budget_ns) << "the budget is used, not hoarded";
  std::printf(
      "planned: fewest timed per long kernel %llu, per short kernel %llu; cost %.2f ms (%.2f ms after the "
      "first plan), budget %.2f ms\n",
      static_cast<unsigned long long>(fewest), static_cast<unsigned long long>(fewest_short),
      run.cost_ns / 1e6, run.cost_after_first_plan_ns / 1e6, budget_ns / 1e6);
}

// The same run under the rate alone, adapted once a second: the warm-up drives N up, and
// the long kernels are timed a handful of times at most.
TEST(SamplePlanner, TheRateAloneStarvesTheSameRun) {
  const SimulatedRun run = simulate_short_run(false);
  std::uint64_t fewest = ~0ull, most = 0;
  for (int k = 0; k < kLongKernels; ++k) {
    fewest = std::min(fewest, run.timed[k]);
    most = std::max(most, run.timed[k]);
  }
  EXPECT_LT(fewest, 20u);
  std::printf("rate alone: timed per long kernel %llu to %llu, cost %.2f ms\n",
              static_cast<unsigned long long>(fewest), static_cast<unsigned long long>(most),
              run.cost_ns / 1e6);
}

TEST(SamplePlanner, SharesByWaterFillingAndKeepsNcclOffTheTop) {
  SampleRateConfig c;
  c.budget = 0.001;
  SamplePlanner planner(c);
  // 250 ms at 0.1%: 250 us, after 10 launches timed at 5 us each: 50 launches to share.
  EXPECT_DOUBLE_EQ(planner.settle(250'000'000, 10, 50'000), 250'000 + 200'000);
  const FunctionDemand demand[] = {
      {1000, 50'000, false, 1, 100},  // long, launched often
      {4, 50'000, false, 1, 100},     // long, launched rarely: all its launches
      {1000, 2'500, false, 1, 100},   // short, with its first samples: 1/8 of a share
      {0, 0, false, 1, 0},            // idle
      {20, 0, true, 1, 0},            // NCCL: all, off the top
      {1000, 50'000, false, 3, 100},  // long, three shapes: three shares
  };
  FunctionPlan plans[6] = {{0, 0}, {0, 0}, {0, 0}, {8, 0}, {0, 0}, {0, 0}};
  std::uint32_t scratch[6];
  planner.plan(demand, plans, scratch, 6);
  // 450 us / 5 us = 90 launches, less 20 NCCL = 70: 4 to the rare one, 66 over weights 1,
  // 1/8 and 3 (a level of 66 / 4.125 launches a weight).
  const double level = 66 / 4.125;
  EXPECT_EQ(plans[1].every, 1u);
  EXPECT_EQ(plans[0].every, static_cast<std::uint32_t>(std::round(1000 / level)));
  EXPECT_EQ(plans[2].every, static_cast<std::uint32_t>(std::round(1000 / (level / 8))));
  EXPECT_EQ(plans[5].every, static_cast<std::uint32_t>(std::round(1000 / (3 * level))));
  EXPECT_EQ(plans[3].every, 8u) << "an idle function keeps its 1 in N";
  EXPECT_EQ(plans[3].quota, 2);
  EXPECT_EQ(plans[4].every, 1u);
  EXPECT_GT(plans[0].quota, level);
  EXPECT_GT(plans[5].quota, 3 * level);
  // Over budget by more than a period's: the next period times nothing, the one after is whole again.
  EXPECT_DOUBLE_EQ(planner.settle(250'000'000, 1000, 5'000'000), 0);
  EXPECT_DOUBLE_EQ(planner.settle(250'000'000, 0, 0), 250'000);
}

TEST(SamplePlanner, AShortKernelHasAFullShareUntilItHasItsFirstSamples) {
  SampleRateConfig c;
  c.budget = 0.001;
  SamplePlanner planner(c);
  planner.settle(250'000'000, 10, 50'000);
  // Two short kernels launched as often: one with 9 samples so far, one with 10.
  const FunctionDemand demand[] = {{1000, 2'500, false, 1, 9}, {1000, 2'500, false, 1, 10}};
  FunctionPlan plans[2] = {};
  std::uint32_t scratch[2];
  planner.plan(demand, plans, scratch, 2);
  // 90 launches: first the one sample the first lacks, then 89 over weights 1 and 1/8.
  EXPECT_DOUBLE_EQ(plans[0].first, 1);
  EXPECT_DOUBLE_EQ(plans[1].first, 0);
  EXPECT_EQ(plans[0].every, static_cast<std::uint32_t>(std::round(1000 / (1 + 89 / 1.125))));
  EXPECT_EQ(plans[1].every, static_cast<std::uint32_t>(std::round(1000 / (89 / 1.125 / 8))));
}

// A rare kernel with no samples yet, among kernels of many shapes that launch far more:
// it is given the 10 it lacks before the period is shared by weight (shared alone, it
// would get about one).
TEST(SamplePlanner, AKernelShortOfItsSamplesIsGivenThemBeforeTheShares) {
  SampleRateConfig c;
  c.budget = 0.001;
  SamplePlanner planner(c);
  planner.settle(250'000'000, 10, 50'000);  // 250 us a period: 50 launches at 5 us
  FunctionDemand demand[7];
  for (int k = 0; k < 6; ++k) demand[k] = {2000, 30'000, false, 8, 50};
  demand[6] = {26, 8'000, false, 1, 0};
  FunctionPlan plans[7] = {};
  std::uint32_t scratch[7];
  planner.plan(demand, plans, scratch, 7);
  EXPECT_DOUBLE_EQ(plans[6].first, 10);
  EXPECT_LE(plans[6].every, 3u) << "26 launches, at least 10 of them planned";
  EXPECT_GE(plans[6].quota, 20);
  for (int k = 0; k < 6; ++k) EXPECT_LT(plans[k].every, 2000u) << "the others still timed";
  // Once it has its samples, it is shared by weight like the rest.
  demand[6].samples = 10;
  planner.plan(demand, plans, scratch, 7);
  EXPECT_DOUBLE_EQ(plans[6].first, 0);
  EXPECT_GT(plans[6].every, 3u);
}

// The short run of the integration test (GpuTime.SlowFirstLaunchesDoNotStarveAShortRun) on a
// busy host, simulated: 24 kernels launched once a step, 1,000 steps a second for 5 s, a
// synchronisation after each step. The first kernel of a step always finds the stream idle
// (its spans are upper bounds: the agent's figures rest on them alone); the second one,
// behind a host slowed by CPU pressure, finds it idle 7 times in 8; the others are queued.
// Each timed launch costs its thread 3 us and the GPU the 4.3 us allowance; the budget is
// 0.2%. `figures`: per kernel, the samples the agent's figures rest on.
// What the hook does with a launch choose_launch picked (hook/gpu_timer.cpp), as the
// simulations see it: when its stream query before the launch finds the stream idle
// (`idle_seen`), the launch is left untimed, its quota given back and the kernel's next
// launches allowed in its place, at the query's 1 us; else it is timed at `timed_cost_ns`.
struct HookedLaunch {
  bool timed = false;
  double cost_ns = 0;
};
HookedLaunch hook_launch(LaunchTiming how, bool idle_seen, double timed_cost_ns,
                         std::atomic<std::int32_t>& left, std::atomic<std::int32_t>& in_place) {
  if (idle_seen) {
    left.fetch_add(1);
    if (how == LaunchTiming::kChosen) in_place.store(kIdleRetries);
    return {false, 1000};
  }
  if (how == LaunchTiming::kInPlace) in_place.store(0);
  return {true, timed_cost_ns};
}

struct IdleStartRun {
  std::vector<std::uint64_t> figures, timed;
  double cost_after_first_plan_ns = 0;
};

// `skip_idle`: as the hook does, a chosen launch that would find the stream idle is left
// untimed once its kernel has a queued span (its quota given back, a stream query's 1 us
// counted); `in_place`: and the kernel's next launches may be timed in its place.
IdleStartRun simulate_idle_starts(bool count_as_the_agent, bool skip_idle = false, bool in_place = false) {
  constexpr int kKernels = 24;
  const SampleRateConfig c;
  SamplePlanner planner(c);
  IdleStartRun run;
  run.figures.assign(kKernels, 0);
  run.timed.assign(kKernels, 0);
  std::vector<std::uint64_t> launches(kKernels, 0), queued(kKernels, 0), planned_at(kKernels, 0);
  std::vector<FunctionPlan> plan(kKernels, FunctionPlan{0, kUnplannedQuota});
  std::vector<std::atomic<std::int32_t>> left(kKernels), retries(kKernels);
  for (auto& l : left) l.store(kUnplannedQuota);
  std::vector<FunctionDemand> demand(kKernels);
  std::vector<std::uint32_t> scratch(kKernels);
  std::uint64_t period_ns = kFirstPlanNs, next_period = period_ns, timed_in_period = 0;
  double cost_in_period = 0;
  bool plan_made = false;
  for (std::uint64_t t = 0; t < 5'000'000'000ull; t += 1'000'000) {
    while (t >= next_period) {
      planner.settle(period_ns, timed_in_period, cost_in_period);
      for (int k = 0; k < kKernels; ++k) {
        const std::uint64_t samples =
            count_as_the_agent ? figure_samples(run.timed[k], queued[k]) : run.timed[k];
        demand[k] = FunctionDemand{launches[k] - planned_at[k], 20'000, false, 1, samples};
        planned_at[k] = launches[k];
      }
      planner.plan(demand.data(), plan.data(), scratch.data(), demand.size());
      for (int k = 0; k < kKernels; ++k) left[k].store(plan[k].quota);
      plan_made = true;
      period_ns = kPlanEveryNs;
      next_period += period_ns;
      timed_in_period = 0;
      cost_in_period = 0;
    }
    for (int k = 0; k < kKernels; ++k) {
      const std::uint64_t n = launches[k]++;
      const std::uint64_t key = 0x7f0000200000ull + 0x40ull * static_cast<std::uint64_t>(k);
      const LaunchTiming how = choose_launch(n, key, false, plan[k].every, 16, left[k], retries[k]);
      if (how == LaunchTiming::kUntimed || (how == LaunchTiming::kInPlace && !in_place)) continue;
      const bool is_queued = k >= 2 || (k == 1 && n % 8 == 5);
      const HookedLaunch h = hook_launch(how, skip_idle && n != 0 && queued[k] != 0 && !is_queued,
                                         3000 + static_cast<double>(c.gpu_cost_ns), left[k], retries[k]);
      cost_in_period += h.cost_ns;
      if (plan_made) run.cost_after_first_plan_ns += h.cost_ns;
      if (!h.timed) continue;
      ++timed_in_period;
      if (n == 0) continue;  // the first launch, apart
      ++run.timed[k];
      if (is_queued) ++queued[k];
    }
  }
  for (int k = 0; k < kKernels; ++k) run.figures[k] = figure_samples(run.timed[k], queued[k]);
  return run;
}

TEST(SamplePlanner, AKernelThatMostlyFindsTheStreamIdleGetsItsSamplesAsTheAgentCountsThem) {
  const IdleStartRun run = simulate_idle_starts(true);
  for (std::size_t k = 0; k < run.figures.size(); ++k)
    EXPECT_GE(run.figures[k], 10u) << "kernel " << k << ", " << run.timed[k] << " timed";
  EXPECT_GE(run.timed[1], 80u) << "1 in 8 queued: timed until it has 10 of those";
  const SampleRateConfig c;
  EXPECT_LE(run.cost_after_first_plan_ns, c.budget * 5e9 + c.budget * 0.25e9) << "within the budget";
  // Counted by its timed launches, it left the full share at 10 of them, with about one
  // figure in eight behind it.
  const IdleStartRun before = simulate_idle_starts(false);
  EXPECT_LT(before.figures[1], 10u) << before.timed[1] << " timed";
  std::printf(
      "idle starts: the second kernel %llu samples of %llu timed (counted by its timed launches: %llu of "
      "%llu); "
      "cost after the first plan %.2f ms, budget %.2f ms\n",
      static_cast<unsigned long long>(run.figures[1]), static_cast<unsigned long long>(run.timed[1]),
      static_cast<unsigned long long>(before.figures[1]), static_cast<unsigned long long>(before.timed[1]),
      run.cost_after_first_plan_ns / 1e6, c.budget * 5e3);
}

// A kernel short of its samples whose timed launches mostly found the stream idle is given
// as many more launches as a sample costs it: 7 samples lacking at 1 sample in 3 timed is
// 21 launches, against 7 for one whose every timed launch was a sample.
TEST(SamplePlanner, AShortKernelThatFindsTheStreamIdleIsGivenLaunchesForTheSamplesItLacks) {
  SampleRateConfig c;
  c.budget = 0.001;
  SamplePlanner planner(c);
  planner.settle(250'000'000, 10, 50'000);  // 90 launches at 5 us (the balance left)
  const FunctionDemand demand[] = {
      {1000, 30'000, false, 1, 3, 9}, {1000, 30'000, false, 1, 3, 3}, {1000, 30'000, false, 1, 3, 2}};
  FunctionPlan plans[3] = {};
  std::uint32_t scratch[3];
  planner.plan(demand, plans, scratch, 3);
  EXPECT_DOUBLE_EQ(plans[0].first, 21) << "a sample in 3 timed launches";
  EXPECT_DOUBLE_EQ(plans[1].first, 7) << "every timed launch a sample";
  EXPECT_DOUBLE_EQ(plans[2].first, 7) << "too few timed launches to tell";
  EXPECT_LT(plans[0].every, plans[1].every);
  // None in 40: counted at 1 in 8, 80 wanted, out of half of the period (45 launches).
  const FunctionDemand none[] = {{1000, 30'000, false, 1, 0, 40}};
  planner.plan(none, plans, scratch, 1);
  EXPECT_DOUBLE_EQ(plans[0].first, 45);
}

// The 5 s GPT run of tests/gpu/gpu_time_check.sh on an H100 replayed: its 39 kernels
// launched 100 times or more, each with its launches per step and the share of its timed
// launches that found the stream idle (measured there, 2026-12-06), 806 steps in 5 s. Half
// of the idle starts are seen by the hook's stream query before the launch (left untimed,
// the kernel's next launches in its place, 1 us counted); the others are timed and are
// not samples. A timed launch costs the launching thread 12 us (10 to 12.6 there) and the
// GPU allowance. `count_yield`: the plan sees the kernels' timed launches beside their
// samples. Returns each kernel's samples, the first launch left out; a kernel whose every
// launch found the stream idle has its upper bounds as samples.
struct ReplayRun {
  std::vector<std::uint64_t> samples;
  double cost_after_first_plan_ns = 0;
};

ReplayRun replay_h100_gpt_short_run(bool count_yield, const SampleRateConfig& c, std::uint64_t warm_up_ns) {
  const std::vector<int> per_step = {16, 20, 12, 8, 12, 4, 8, 16, 19, 6, 4, 8, 4, 3, 4, 4, 3, 3, 8, 12,
                                     3,  3,  8,  3, 4,  7, 4, 4,  4,  4, 1, 1, 1, 1, 1, 1, 1, 4, 1};
  const std::vector<double> idle = {0.24, 0.54, 0.80, 0.07, 0.45, 0.17, 0.21, 0.23, 0.13, 0.00,
                                    0.56, 0.12, 0.70, 0.00, 0.44, 0.20, 0.00, 0.00, 0.00, 0.29,
                                    0.11, 0.00, 0.61, 0.00, 0.29, 0.17, 0.09, 0.00, 0.27, 0.00,
                                    1.00, 1.00, 0.30, 1.00, 0.23, 0.10, 1.00, 0.56, 0.40};
  const std::size_t kernels = per_step.size();
  SamplePlanner planner(c);
  std::vector<std::uint64_t> launches(kernels, 0), planned_at(kernels, 0), timed(kernels, 0),
      queued(kernels, 0);
  std::vector<FunctionPlan> plan(kernels, FunctionPlan{0, kUnplannedQuota});
  std::vector<std::atomic<std::int32_t>> left(kernels), in_place(kernels);
  for (auto& l : left) l.store(kUnplannedQuota);
  std::vector<FunctionDemand> demand(kernels);
  std::vector<std::uint32_t> scratch(kernels);
  std::uint64_t rng = 0x2545f4914f6cdd1dull;
  const auto uniform = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return static_cast<double>(rng >> 11) / static_cast<double>(1ull << 53);
  };
  // One launch of each kernel at the start (the warm-up's), the steps after the warm-up.
  const std::uint64_t step_ns = (5'000'000'000ull - warm_up_ns) / 806;
  constexpr double kHostNs = 12'000;
  std::uint64_t period_ns = kFirstPlanNs, next_period = period_ns, timed_in_period = 0;
  double cost_in_period = 0;
  bool plan_made = false;
  ReplayRun run;
  for (std::uint64_t t = 0; t < 5'000'000'000ull; t += t == 0 ? warm_up_ns : step_ns) {
    while (t >= next_period) {
      planner.settle(period_ns, timed_in_period, cost_in_period);
      for (std::size_t k = 0; k < kernels; ++k) {
        demand[k] =
            FunctionDemand{launches[k] - planned_at[k], 20'000, false, 1, figure_samples(timed[k], queued[k]),
                           count_yield ? timed[k] : 0};
        planned_at[k] = launches[k];
      }
      planner.plan(demand.data(), plan.data(), scratch.data(), kernels);
      for (std::size_t k = 0; k < kernels; ++k) left[k].store(plan[k].quota);
      plan_made = true;
      period_ns = kPlanEveryNs;
      next_period += period_ns;
      timed_in_period = 0;
      cost_in_period = 0;
    }
    for (std::size_t k = 0; k < kernels; ++k) {
      for (int i = 0; i < (t == 0 ? 1 : per_step[k]); ++i) {
        const std::uint64_t n = launches[k]++;
        const std::uint64_t key = 0x7f0000300000ull + 0x40ull * k;
        const LaunchTiming how = choose_launch(n, key, false, plan[k].every, 16, left[k], in_place[k]);
        if (how == LaunchTiming::kUntimed) continue;
        const bool found_idle = uniform() < idle[k];
        const bool idle_seen =
            n != 0 && queued[k] != 0 && found_idle && uniform() < 0.5;  // before the launch
        const HookedLaunch h =
            hook_launch(how, idle_seen, kHostNs + static_cast<double>(c.gpu_cost_ns), left[k], in_place[k]);
        cost_in_period += h.cost_ns;
        if (plan_made) run.cost_after_first_plan_ns += h.cost_ns;
        if (!h.timed) continue;
        ++timed_in_period;
        if (n == 0) continue;
        ++timed[k];
        if (!found_idle) ++queued[k];
      }
    }
  }
  for (std::size_t k = 0; k < kernels; ++k) run.samples.push_back(figure_samples(timed[k], queued[k]));
  return run;
}

// Replayed after a warm-up of 1 s and of 2 s (the first launches, then nothing to time):
// every kernel gets its 10 samples within the budget. Planned as before (one timed launch
// a sample, the balance bounded to one period's budget either way), kernels are left short
// in both: the second of warm-up lost with its budget.
TEST(SamplePlanner, TheH100GptShortRunReplayedGivesEveryKernelItsSamples) {
  const auto short_of = [](const ReplayRun& r) {
    return std::count_if(r.samples.begin(), r.samples.end(), [](std::uint64_t n) { return n < 10; });
  };
  const SampleRateConfig c;
  SampleRateConfig before_c;
  before_c.saved_periods = 1;
  before_c.most_periods_at_once = 2;
  for (const std::uint64_t warm_up_ns : {1'000'000'000ull, 2'000'000'000ull}) {
    const ReplayRun run = replay_h100_gpt_short_run(true, c, warm_up_ns);
    const ReplayRun before = replay_h100_gpt_short_run(false, before_c, warm_up_ns);
    EXPECT_EQ(short_of(run), 0) << warm_up_ns;
    EXPECT_GT(short_of(before), 0) << warm_up_ns;
    EXPECT_LE(run.cost_after_first_plan_ns, c.budget * 5e9 + c.budget * 0.25e9) << "within the budget";
    std::printf(
        "replayed H100 GPT short run, %.0f s of warm-up: %lld of 39 kernels under 10 samples (planned as "
        "before: "
        "%lld), fewest %llu; cost after the first plan %.2f ms (before: %.2f ms)\n",
        static_cast<double>(warm_up_ns) / 1e9, static_cast<long long>(short_of(run)),
        static_cast<long long>(short_of(before)),
        static_cast<unsigned long long>(*std::min_element(run.samples.begin(), run.samples.end())),
        run.cost_after_first_plan_ns / 1e6, before.cost_after_first_plan_ns / 1e6);
  }
}

// The hook leaves a chosen launch untimed when it would find the stream idle: the kernel
// that finds work queued 1 time in 8 then lost 7 of every 8 launches its plan chose.
// Timed in their place, its next launches give it its samples within the budget.
TEST(SamplePlanner, LaunchesInPlaceOfIdleStartsGiveAKernelItsSamples) {
  const IdleStartRun skipped = simulate_idle_starts(true, true, false);
  const IdleStartRun run = simulate_idle_starts(true, true, true);
  for (std::size_t k = 0; k < run.figures.size(); ++k)
    EXPECT_GE(run.figures[k], 10u) << "kernel " << k << ", " << run.timed[k] << " timed";
  EXPECT_LT(skipped.figures[1], run.figures[1]);
  const SampleRateConfig c;
  EXPECT_LE(run.cost_after_first_plan_ns, c.budget * 5e9 + c.budget * 0.25e9) << "within the budget";
  std::printf("idle starts left untimed: the second kernel %llu samples (%llu without launches in place)\n",
              static_cast<unsigned long long>(run.figures[1]),
              static_cast<unsigned long long>(skipped.figures[1]));
}

// A launch chosen by the plan, else one in place of a chosen one left untimed: at most
// kIdleRetries of them, within the period's cap.
TEST(ChooseLaunch, InPlaceOfAnIdleStartAtMostItsRetriesWithinTheCap) {
  constexpr std::uint64_t key = 0x7f0012345600;
  std::atomic<std::int32_t> left{100}, in_place{0};
  // Never chosen at 1 in 65,536 within the first block.
  for (std::uint64_t n = 1; n < 50; ++n)
    EXPECT_EQ(choose_launch(n, key, false, 1u << 16, 16, left, in_place), LaunchTiming::kUntimed);
  in_place = kIdleRetries;
  int in_place_timed = 0;
  for (std::uint64_t n = 50; n < 100; ++n)
    in_place_timed += choose_launch(n, key, false, 1u << 16, 16, left, in_place) == LaunchTiming::kInPlace;
  EXPECT_EQ(in_place_timed, kIdleRetries);
  EXPECT_EQ(left.load(), 100 - kIdleRetries) << "each from the cap";
  in_place = kIdleRetries;
  left = 1;
  EXPECT_EQ(choose_launch(100, key, false, 1u << 16, 16, left, in_place), LaunchTiming::kInPlace);
  EXPECT_EQ(choose_launch(101, key, false, 1u << 16, 16, left, in_place), LaunchTiming::kUntimed)
      << "cap spent";
  // Chosen by the plan (1 in 1) whatever is left in place.
  left = 5;
  EXPECT_EQ(choose_launch(102, key, false, 1, 16, left, in_place), LaunchTiming::kChosen);
  EXPECT_EQ(choose_launch(0, key, false, 1u << 16, 16, left, in_place), LaunchTiming::kChosen)
      << "a first launch";
}

TEST(CountedHostCost, ADescheduledPartCountsAsTheHooksWorkAtMost) {
  EXPECT_EQ(counted_host_cost(1'200, 900), 2'100u);
  EXPECT_EQ(counted_host_cost(4'000'000, 900), kMaxCountedPartNs + 900);
  EXPECT_EQ(counted_host_cost(1'000, 30'000'000), 1'000 + kMaxCountedPartNs);
}

// The first launch is timed whatever the plan (the agent keeps it apart), an NCCL kernel
// always; any other at its planned 1 in N (the process's before a plan) until the
// period's cap runs out.
TEST(TimeLaunch, FirstAndNcclAlwaysOthersByThePlanWithinItsCap) {
  std::atomic<std::int32_t> left{0};
  EXPECT_TRUE(time_launch(0, 0x7f0012345600, false, 1u << 16, 1u << 16, left)) << "a first launch, cap spent";
  EXPECT_TRUE(time_launch(7, 0x7f0012345600, true, 1u << 16, 1u << 16, left)) << "NCCL";
  EXPECT_EQ(left.load(), 0) << "neither takes from the cap";
  left = 3;
  int timed = 0;
  for (std::uint64_t n = 1; n <= 100; ++n)
    timed += time_launch(n, 0x7f0012345600, false, 1, 16, left) ? 1 : 0;
  EXPECT_EQ(timed, 3) << "every launch chosen at 1 in 1, three allowed";
  left = 1000;
  timed = 0;
  for (std::uint64_t n = 1; n < 1600; ++n)
    timed += time_launch(n, 0x7f0012345600, false, 0, 16, left) ? 1 : 0;
  EXPECT_EQ(timed, 99) << "not planned: the process's 1 in 16, one per block after the first";
}

using Env = std::map<std::string, std::string>;

GpuTimeSettings settings_of(const Env& env, std::string* warnings) {
  return read_gpu_time_settings(
      [](const char* name, void* context) -> const char* {
        const auto& e = *static_cast<const Env*>(context);
        const auto it = e.find(name);
        return it == e.end() ? nullptr : it->second.c_str();
      },
      const_cast<Env*>(&env), warnings);
}

TEST(GpuTimeSettings, DefaultsWithoutTheVariables) {
  std::string warnings;
  const GpuTimeSettings s = settings_of({}, &warnings);
  EXPECT_DOUBLE_EQ(s.rate.budget, SampleRateConfig{}.budget);
  EXPECT_EQ(s.poll_ns, 5'000'000u);
  EXPECT_TRUE(warnings.empty());
}

TEST(GpuTimeSettings, BudgetInPercentAndPollInMilliseconds) {
  std::string warnings;
  const GpuTimeSettings s =
      settings_of({{"EACGM_GPU_TIME_BUDGET", "0.05"}, {"EACGM_GPU_TIME_POLL_MS", "50"}}, &warnings);
  EXPECT_DOUBLE_EQ(s.rate.budget, 0.0005);
  EXPECT_EQ(s.poll_ns, 50'000'000u);
  EXPECT_TRUE(warnings.empty()) << warnings;
}

TEST(GpuTimeSettings, BadValuesKeepTheDefaultsAndSaySo) {
  for (const char* budget : {"0", "-1", "51", "abc", "0.2%", "nan", "inf"}) {
    std::string warnings;
    const GpuTimeSettings s = settings_of({{"EACGM_GPU_TIME_BUDGET", budget}}, &warnings);
    EXPECT_DOUBLE_EQ(s.rate.budget, SampleRateConfig{}.budget) << budget;
    EXPECT_NE(warnings.find(std::string("EACGM_GPU_TIME_BUDGET=") + budget), std::string::npos) << warnings;
  }
  for (const char* poll : {"0", "1001", "2.5", "5ms", ""}) {
    std::string warnings;
    const GpuTimeSettings s = settings_of({{"EACGM_GPU_TIME_POLL_MS", poll}}, &warnings);
    EXPECT_EQ(s.poll_ns, 5'000'000u) << poll;
    EXPECT_EQ(warnings.empty(), *poll == '\0') << poll << ": " << warnings;
  }
}

TEST(GpuTimeSettings, HoldsOnUnlessTurnedOffOrEveryLaunchBlocks) {
  std::string warnings;
  EXPECT_TRUE(settings_of({}, &warnings).hold);
  for (const char* off : {"0", "off", "false"})
    EXPECT_FALSE(settings_of({{"EACGM_GPU_TIME_HOLD", off}}, &warnings).hold) << off;
  EXPECT_TRUE(settings_of({{"EACGM_GPU_TIME_HOLD", "1"}}, &warnings).hold);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_TRUE(settings_of({{"EACGM_GPU_TIME_HOLD", "maybe"}}, &warnings).hold);
  EXPECT_NE(warnings.find("EACGM_GPU_TIME_HOLD=maybe"), std::string::npos) << warnings;
  // Every launch waits for its kernel there: a held stream would wait for the launch.
  EXPECT_FALSE(settings_of({{"CUDA_LAUNCH_BLOCKING", "1"}}, &warnings).hold);
  EXPECT_TRUE(settings_of({{"CUDA_LAUNCH_BLOCKING", "0"}}, &warnings).hold);
}

// A hold's word: the launching thread's next value, written when it ends the hold; each
// hold waits for a value no earlier write reached (cyclically at least: the GPU compares
// (int32_t)(word - value) >= 0).
TEST(StreamHolds, EachHoldWaitsForAValueOnlyItsEndWrites) {
  static StreamHolds holds;
  std::uint32_t page[kHoldSlots] = {};
  const std::uint32_t slot = holds.claim_slot();
  ASSERT_LT(slot, kHoldSlots);
  std::uint32_t last = page[slot];
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t v = holds.begin(slot, &page[slot], 1'000 + i);
    EXPECT_LT(static_cast<std::int32_t>(page[slot] - v), 0) << "the stream waits";
    EXPECT_EQ(holds.outstanding(), 1u);
    EXPECT_TRUE(holds.end(slot));
    EXPECT_EQ(page[slot], v);
    EXPECT_EQ(holds.outstanding(), 0u);
    EXPECT_GT(v, last);
    last = v;
  }
  EXPECT_FALSE(holds.end(slot)) << "no hold to end";
}

// The watchdog releases only the holds begun at least its age ago, each once; the launching
// thread's end after that says it did not release it, and nothing is released twice.
TEST(StreamHolds, TheWatchdogReleasesOnlyOldHoldsAndOnlyOnce) {
  static StreamHolds holds;
  std::uint32_t page[kHoldSlots] = {};
  const std::uint32_t a = holds.claim_slot();
  const std::uint32_t b = holds.claim_slot();
  const std::uint32_t va = holds.begin(a, &page[a], 1'000'000);
  const std::uint32_t vb = holds.begin(b, &page[b], 4'000'000);
  EXPECT_EQ(holds.expire(5'000'000, kHoldExpiryNs), 0u) << "none is 5 ms old";
  EXPECT_EQ(holds.expire(6'000'000, kHoldExpiryNs), 1u);
  EXPECT_EQ(page[a], va);
  EXPECT_EQ(page[b], 0u);
  EXPECT_EQ(holds.expire(6'500'000, kHoldExpiryNs), 0u) << "released once";
  EXPECT_FALSE(holds.end(a)) << "the watchdog released it";
  EXPECT_TRUE(holds.end(b));
  EXPECT_EQ(page[b], vb);
  EXPECT_EQ(holds.outstanding(), 0u);
  // The next hold of `a` waits for a value past the one the watchdog wrote.
  const std::uint32_t va2 = holds.begin(a, &page[a], 7'000'000);
  EXPECT_LT(static_cast<std::int32_t>(page[a] - va2), 0);
  EXPECT_TRUE(holds.end(a));
}

// Racing a launching thread's holds with a watchdog that expires everything at once: every
// hold is released exactly once (the count of outstanding holds comes back to zero, each
// word ends at its last value).
TEST(StreamHolds, AHoldIsReleasedOnceWhenTheThreadAndTheWatchdogRace) {
  static StreamHolds holds;
  static std::uint32_t page[kHoldSlots];
  const std::uint32_t slot = holds.claim_slot();
  std::atomic<bool> done{false};
  std::uint32_t by_thread = 0;
  std::thread watchdog([&] {
    std::uint32_t released = 0;
    while (!done.load()) released += holds.expire(~std::uint64_t{0} >> 1, 0);
    (void)released;
  });
  std::uint32_t v = 0;
  for (int i = 0; i < 20'000; ++i) {
    v = holds.begin(slot, &page[slot], 1 + static_cast<std::uint64_t>(i));
    by_thread += holds.end(slot) ? 1 : 0;
  }
  done.store(true);
  watchdog.join();
  EXPECT_EQ(holds.outstanding(), 0u);
  EXPECT_EQ(__atomic_load_n(&page[slot], __ATOMIC_ACQUIRE), v);
  EXPECT_LE(by_thread, 20'000u);
}

TEST(StreamHolds, ThreadsPastThePageNeverHold) {
  static StreamHolds holds;
  for (std::uint32_t i = 0; i < kHoldSlots; ++i) EXPECT_EQ(holds.claim_slot(), i);
  EXPECT_EQ(holds.claim_slot(), kHoldSlots);
  EXPECT_EQ(holds.claim_slot(), kHoldSlots);
}

// The hook's wait buckets are the agent's log buckets with 3 bits instead of 6: exact
// below 8 ns, 8 per power of two, each less than 1/8 of its start wide, and capped.
TEST(WaitBuckets, EightPerPowerOfTwoUpToTheLast) {
  for (std::uint64_t v = 0; v < 8; ++v) EXPECT_EQ(wait_bucket(v), v);
  std::uint32_t last = 0;
  for (std::uint64_t v = 8; v < (std::uint64_t{1} << 42); v += v / 7 + 1) {
    const std::uint32_t b = wait_bucket(v);
    EXPECT_EQ(b, eacgm_hist_key_bits(v, kWaitBucketBits)) << v;
    EXPECT_GE(b, last) << v;
    last = b;
  }
  EXPECT_EQ(wait_bucket((std::uint64_t{1} << 42) - 1), kWaitBuckets - 1);
  EXPECT_EQ(wait_bucket(std::uint64_t{1} << 50), kWaitBuckets - 1) << "longer waits go in the last";
  EXPECT_EQ(wait_bucket(~std::uint64_t{0}), kWaitBuckets - 1);
  EXPECT_NE(wait_bucket(1'000'000), wait_bucket(1'100'000)) << "a 10% difference is another bucket";
}

}  // namespace
}  // namespace eacgm::govern
