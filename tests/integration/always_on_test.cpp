// Integration tests (root, real eBPF uprobe sessions): the always-on mode counts every
// call exactly at one trap per call, with the same totals as per-call tracing, under a
// multi-threaded tight loop (no ring buffer, so nothing to drop), and times a sample,
// the calls held off the CPU counted apart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

constexpr int kThreads = 4;
constexpr int kIters = 50'000;

// `budget`: trace.budget; 0 keeps the sample rate fixed, so the timed share is known.
// `trace`: more [trace] settings; `loop`: more driver_loop arguments.
json run_loop(const std::string& mode, double budget = 0, int iters = kIters, const std::string& trace = "",
              std::vector<std::string> loop = {"--threads", std::to_string(kThreads)}) {
  const std::string config = temp_dir() + "/always_on.toml";
  std::ofstream(config) << "[trace]\nbudget = " << budget << "\n" << trace;
  std::vector<std::string> argv{bin("eacgm"), "run",
                                "--json",     "--no-gpu",
                                "--config",   config,
                                "--mode",     mode,
                                "--probes",   "cuda_driver",
                                "--",         bin("driver_loop"),
                                "--iters",    std::to_string(iters)};
  argv.insert(argv.end(), loop.begin(), loop.end());
  Subprocess eacgm(argv);
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  return json::parse(eacgm.out());
}

std::map<std::string, json> by_function(const json& doc) {
  std::map<std::string, json> out;
  for (const auto& f : doc["functions"]) out[f["function"].get<std::string>()] = f;
  return out;
}

TEST(AlwaysOn, CountsEveryCallOfAMultiThreadedLoopExactly) {
  const json doc = run_loop("always-on");
  auto f = by_function(doc);
  constexpr std::uint64_t kCalls = std::uint64_t{kThreads} * kIters;
  for (const char* name : {"cuLaunchKernel", "cuMemsetD32Async", "cuStreamSynchronize"}) {
    ASSERT_TRUE(f.contains(name)) << doc["functions"].dump(2);
    EXPECT_EQ(f[name]["calls"], kCalls) << name;
    EXPECT_EQ(f[name]["counted"], kCalls) << name << ": counted in the kernel, not recorded";
    // One call in 16 per CPU is timed (trace.sample_shift = 4): about 1/16 of them,
    // never all, and every timed call is an error (the stub libcuda fails them all).
    // The synchronisation is timed at every call (probe/always_on.h times_every_call).
    const auto timed = f[name]["timed"].get<std::uint64_t>();
    if (std::string(name) == "cuStreamSynchronize") {
      EXPECT_EQ(timed, kCalls) << name;
      EXPECT_FALSE(f[name]["sampled"].get<bool>()) << name;
    } else {
      EXPECT_GT(timed, kCalls / 32) << name;
      EXPECT_LT(timed, kCalls / 8) << name;
      EXPECT_TRUE(f[name]["sampled"].get<bool>()) << name;
    }
    EXPECT_EQ(f[name]["errors"], timed) << name;
  }
  EXPECT_EQ(f["cuMemsetD32Async"]["bytes"], kCalls * 4000) << "1000 words of 4 bytes a call";
  // No record per call: the ring buffer carried none of them.
  EXPECT_EQ(doc["accounting"]["events"], 0) << doc["accounting"].dump(2);
  EXPECT_EQ(doc["accounting"]["counted_calls"], 3 * kCalls);
  EXPECT_EQ(doc["accounting"]["drops"], 0);
}

// Two threads of the loop on one CPU preempt each other: the timed calls a switch held off
// the CPU for half their time or more are counted apart (the kernel's run delay, read at
// the sampled call's entry and return), for the anomaly detector to judge apart.
TEST(AlwaysOn, TimedCallsHeldOffTheCpuAreCountedApart) {
  const std::string config = temp_dir() + "/held.toml";
  std::ofstream(config) << "[trace]\nbudget = 0\n";
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--config", config, "--mode", "always-on",
                    "--probes", "cuda_driver", "--", "taskset", "-c", "0", bin("driver_loop"), "--threads",
                    "2", "--iters", "200000"});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  const auto held = doc["accounting"].value("sampled_held_calls", std::uint64_t{0});
  EXPECT_GT(held, 0u) << doc["accounting"].dump(2);
  EXPECT_LT(held, doc["accounting"]["sampled_calls"].get<std::uint64_t>() / 10) << doc["accounting"].dump(2);
}

TEST(AlwaysOn, TraceAsksForItWithMode) {
  // `trace` is per call unless asked: with --mode always-on the counted calls stay in the
  // kernel (no event each), and the done line counts them.
  const std::string dir = temp_dir();
  Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "--mode", "always-on", "--probes", "cuda_driver", "-o",
                    dir + "/events.jsonl", "--", bin("driver_loop"), "--threads", "2", "--iters", "1000"});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  EXPECT_EQ(read_file(dir + "/events.jsonl").find("cuLaunchKernel"), std::string::npos);
  EXPECT_NE(eacgm.err().find("counted_calls=6000"), std::string::npos) << eacgm.err();
}

TEST(AlwaysOn, TotalsEqualPerCallTracing) {
  auto counted = by_function(run_loop("always-on"));
  // Per-call tracing counts a call from its record, one record a call: a loaded machine
  // can fill the ring (four threads of a tight loop on two cores) and the records lost are
  // counted as drops. Up to three runs for one without drops; where all three dropped,
  // every call missing must be one the drops account for.
  json per_call;
  for (int attempt = 0; attempt < 3; ++attempt) {
    per_call = run_loop("per-call");
    if (per_call["accounting"]["drops"].get<std::uint64_t>() == 0) break;
  }
  const auto drops = per_call["accounting"]["drops"].get<std::uint64_t>();
  auto traced = by_function(per_call);
  std::uint64_t missing = 0;
  for (const char* name : {"cuLaunchKernel", "cuMemsetD32Async", "cuStreamSynchronize"}) {
    ASSERT_TRUE(traced.contains(name)) << name;
    const auto all = counted[name]["calls"].get<std::uint64_t>();
    const auto seen = traced[name]["calls"].get<std::uint64_t>();
    ASSERT_LE(seen, all) << name;
    missing += all - seen;
    if (drops == 0) {
      EXPECT_EQ(all, seen) << name;
      EXPECT_EQ(counted[name]["bytes"], traced[name]["bytes"]) << name;
    }
    EXPECT_EQ(traced[name]["counted"], 0) << name;
    EXPECT_EQ(traced[name]["timed"], traced[name]["calls"]) << name;
  }
  EXPECT_LE(missing, drops) << per_call["accounting"].dump(2);
  // The memsets' bytes follow their calls: 4,000 bytes each.
  EXPECT_EQ(traced["cuMemsetD32Async"]["bytes"].get<std::uint64_t>(),
            traced["cuMemsetD32Async"]["calls"].get<std::uint64_t>() * 4000);
}

TEST(AlwaysOn, LaunchesAreCountedPerKernelHandle) {
  // Unnamed handles (the stub has no modules) are counted under their function only;
  // the per-kernel table needs a name, which the naming probes supply on a real driver.
  const json doc = run_loop("always-on");
  EXPECT_EQ(by_function(doc)["cuLaunchKernel"]["calls"], std::uint64_t{kThreads} * kIters);
  EXPECT_EQ(doc["accounting"]["count_map_full"], 0);
}

TEST(AlwaysOn, EstimatesTheProbesCostAndTimesLessToKeepTheBudget) {
  // A loop that does nothing but probed calls is over any budget on its entry traps
  // alone: the controller times its probes as rarely as it may, and with the duty cycle
  // off (`duty_cycle = false`), counts stay exact. Long enough (about 3 s here) for its
  // once-a-second decisions.
  constexpr int kLong = 400'000;
  const json doc = run_loop("always-on", 0.01, kLong, "duty_cycle = false\n");
  const json& o = doc["overhead"];
  ASSERT_TRUE(o["calibrated"].get<bool>()) << o.dump(2);
  EXPECT_GT(o["hit_cost_ns"]["entry"].get<double>(), 0);
  EXPECT_GT(o["hit_cost_ns"]["entry_return"].get<double>(), o["hit_cost_ns"]["entry"].get<double>());
  ASSERT_EQ(o["processes"].size(), 1u) << o.dump(2);
  const json& p = o["processes"][0];
  // 3 counted calls per iteration at the calibrated entry cost at least.
  EXPECT_GE(p["estimated_s"].get<double>(),
            3.0 * kThreads * kLong * o["hit_cost_ns"]["entry"].get<double>() / 1e9 * 0.99);
  EXPECT_GT(p["cpu_s"].get<double>(), 0);
  EXPECT_GT(doc["accounting"]["budget_shift_raises"].get<std::uint64_t>(), 0u) << doc["accounting"].dump(2);
  EXPECT_GT(o["reduced_probes"].get<std::uint32_t>(), 0u);
  EXPECT_EQ(doc["accounting"]["counted_calls"], 3ull * kThreads * kLong) << "counts stay exact";
}

TEST(AlwaysOn, OverBudgetOnEntriesTheCountedProbesAreCycledAndCountsEstimated) {
  // One thread launching between 20 us computations: its three traps a round are a few
  // percent of its time, over the 1% budget on entries alone. The launch and memset
  // probes are attached only part of each second, their counts scaled to the whole
  // time and marked as estimates with their error; the synchronisation (timed at every
  // call, so pinned) stays attached and exact, and counts the rounds.
  // The trace ends (--duration) while the loop still runs, so no interval ends in its
  // exit; the synchronisation counts the rounds traced, the true count of each probe.
  // The default configuration (budget 1%, duty cycle on). The first two seconds or so are
  // counted whole (the first detach waits for two of them to agree on the mix).
  const std::string config = temp_dir() + "/duty.toml";
  const std::string duty_log = temp_dir() + "/duty.log";
  std::ofstream(config) << "[trace]\n";
  setenv("EACGM_DUTY_LOG", duty_log.c_str(), 1);  // inherited by the agent (execv)
  Subprocess eacgm({bin("eacgm"), "run",       "--json",    "--no-gpu",         "--config",
                    config,       "--mode",    "always-on", "--probes",         "cuda_driver",
                    "--duration", "6",         "--",        bin("driver_loop"), "--threads",
                    "1",          "--work-us", "20",        "--iters",          "300000"});
  const int status = eacgm.wait();
  unsetenv("EACGM_DUTY_LOG");
  ASSERT_EQ(status, 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  auto f = by_function(doc);
  const json& o = doc["overhead"];
  ASSERT_TRUE(o["calibrated"].get<bool>()) << o.dump(2);
  EXPECT_LT(o["attached_share"].get<double>(), 0.9) << o.dump(2);
  EXPECT_GT(doc["accounting"]["duty_switches"].get<std::uint64_t>(), 0u) << doc["accounting"].dump(2);
  EXPECT_EQ(doc["accounting"]["duty_failures"], 0) << doc["accounting"].dump(2);
  // The kernel installs and removes the probes one by one: the loop hit some of them
  // meanwhile, outside the windows (those traps are not counted as calls).
  EXPECT_GT(doc["accounting"].value("duty_switch_traps", std::uint64_t{0}), 0u) << doc["accounting"].dump(2);
  ASSERT_TRUE(f.contains("cuStreamSynchronize")) << doc["functions"].dump(2);
  EXPECT_FALSE(f["cuStreamSynchronize"]["estimated"].get<bool>());
  const auto rounds = f["cuStreamSynchronize"]["calls"].get<std::uint64_t>();
  ASSERT_GT(rounds, 10'000u) << "the loop ran while traced";
  const double kRounds = static_cast<double>(rounds);
  for (const char* name : {"cuLaunchKernel", "cuMemsetD32Async"}) {
    ASSERT_TRUE(f.contains(name)) << doc["functions"].dump(2);
    EXPECT_TRUE(f[name]["estimated"].get<bool>()) << f[name].dump(2);
    const auto calls = f[name]["calls"].get<double>();
    // Within 5% of the true count (about 1% on an idle machine), the error given included.
    const double error = f[name]["calls_error"].get<double>();
    EXPECT_GT(error, 0) << f[name].dump(2);
    EXPECT_LT(error, 0.05 * kRounds) << f[name].dump(2);
    EXPECT_NEAR(calls, kRounds, 0.05 * kRounds + 2 * error)
        << name << ": the estimate is close to the true count";
  }
  // Fewer traps were taken than calls made.
  EXPECT_LT(doc["accounting"]["counted_calls"].get<std::uint64_t>(), 2 * rounds);
  // The kernel timed the gaps between the thread's synchronisations inside the windows
  // and outside them (the pace's measure), once the cycle had moved the window.
  std::ifstream log(duty_log);
  std::uint64_t in_gaps = 0, out_gaps = 0;
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    for (std::string kv; fields >> kv;) {
      if (kv.rfind("in_gaps=", 0) == 0) in_gaps += std::stoull(kv.substr(8));
      if (kv.rfind("out_gaps=", 0) == 0) out_gaps += std::stoull(kv.substr(9));
    }
  }
  EXPECT_GT(in_gaps, 1000u) << "gaps inside the windows";
  EXPECT_GT(out_gaps, 1000u) << "gaps outside the windows";
  EXPECT_LT(in_gaps + out_gaps, rounds) << "no gap across a switch";
}

TEST(AlwaysOn, AShortRunThatEndsSoonAfterTheFirstDetachIsEstimatedWhole) {
  // Launches and memsets in bursts of 100 between synchronisations, as `run` ships (the
  // default configuration): the probes are attached from the start until two intervals
  // agree on the mix (two seconds or so of the loop; more rounds than a fast machine
  // makes in them), then cycled at a small fraction, and the loop, fast without them,
  // ends before a window has seen enough of its synchronisations to go by. The calls
  // after the detach are its synchronisations then, times the ratio of the part counted
  // whole.
  constexpr int kRounds = 100'000, kBurst = 100;
  const std::string config = temp_dir() + "/short.toml";
  std::ofstream(config) << "[trace]\n";
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--config", config, "--probes", "cuda_driver",
                    "--", bin("driver_loop"), "--threads", "1", "--iters", std::to_string(kRounds), "--burst",
                    std::to_string(kBurst)});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  auto f = by_function(doc);
  ASSERT_TRUE(f.contains("cuStreamSynchronize")) << doc["functions"].dump(2);
  EXPECT_EQ(f["cuStreamSynchronize"]["calls"], kRounds);
  // Every call of the loop is a probed one: far over the budget, so the probes were
  // detached for most of the run.
  EXPECT_LT(doc["overhead"]["attached_share"].get<double>(), 0.9) << doc["overhead"].dump(2);
  constexpr double kCalls = double{kRounds} * kBurst;
  for (const char* name : {"cuLaunchKernel", "cuMemsetD32Async"}) {
    ASSERT_TRUE(f.contains(name)) << doc["functions"].dump(2);
    EXPECT_TRUE(f[name]["estimated"].get<bool>()) << f[name].dump(2);
    const double error = f[name]["calls_error"].get<double>();
    EXPECT_NEAR(f[name]["calls"].get<double>(), kCalls, 0.02 * kCalls + 2 * error) << f[name].dump(2);
    EXPECT_LT(error, 0.05 * kCalls) << f[name].dump(2);
  }
}

TEST(AlwaysOn, CalibrationReportsEachKindOfHit) {
  Subprocess eacgm({bin("eacgm"), "probes", "--calibrate"});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const std::string out = eacgm.out();
  for (const char* row : {"counted at entry", "timed call", "single-stepped", "per call"})
    EXPECT_NE(out.find(row), std::string::npos) << row << " in:\n" << out;
}

}  // namespace
}  // namespace eacgm::test
