// GPU time through libeacgm_hook.so, end to end against the FAKE libcuda
// (tests/fakes/fake_libcuda: each launch is EACGM_FAKE_KERNEL_US of pretend GPU work and
// an event pair times exactly that): `eacgm run --gpu-time` preloads the hook, the hook
// times 1 launch in 16 per kernel and every NCCL kernel, never a launch while a capture is
// underway, and the agent reads its ring into the report. The same on a real GPU:
// tests/gpu/gpu_time_check.sh.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "subprocess.h"

namespace {

using eacgm::test::bin;
using eacgm::test::Subprocess;
using json = nlohmann::json;

constexpr double kKernelNs = 50'000;

json run_gpu_time(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{"/usr/bin/env",
                                "EACGM_FAKE_KERNEL_US=50",
                                "EACGM_FAKE_KERNEL_PER_BLOCK=1",
                                bin("eacgm"),
                                "run",
                                "--json",
                                "--no-gpu",
                                "--gpu-time"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  Subprocess eacgm(argv);
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  return json::parse(eacgm.out());
}

std::map<std::string, json> kernels_by_name(const json& doc) {
  std::map<std::string, json> out;
  for (const auto& k : doc["gpu_time"]["kernels"]) out[k["name"].get<std::string>()] = k;
  return out;
}

TEST(GpuTime, KernelsNcclAndGraphsTimedThroughTheHook) {
  const json doc = run_gpu_time();
  auto k = kernels_by_name(doc);
  ASSERT_TRUE(k.contains("kernelA(float*)")) << doc["gpu_time"].dump(2);
  const json& a = k["kernelA(float*)"];
  EXPECT_EQ(a["launches"], 200) << "exact launch count from the hook";
  // 1 launch in 16: the first, then one in each block of 16 (sample_launch); the last
  // block (launches 192-199) is half there.
  const int timed = a["timed"].get<int>();
  EXPECT_TRUE(timed == 12 || timed == 13) << timed;
  EXPECT_NEAR(a["p50_ns"].get<double>(), kKernelNs, kKernelNs * 0.03);
  // The first launch (which also found the pretend GPU idle) is kept apart: the others,
  // queued behind earlier work, make the figures, and say how many they are.
  EXPECT_EQ(a["samples"], timed - 1);
  ASSERT_TRUE(a["first_launch_ns"].is_number()) << a.dump(2);
  // It found the stream idle: less the host's time in the launch call, which the fake's
  // pretend GPU counts differently, it is near the kernel's time, not equal to it.
  EXPECT_GT(a["first_launch_ns"].get<double>(), 0);
  EXPECT_LT(a["first_launch_ns"].get<double>(), 3 * kKernelNs);
  EXPECT_EQ(a["idle_starts"], 0);
  EXPECT_FALSE(a["upper_bound"].get<bool>());
  EXPECT_NEAR(a["p99_ns"].get<double>(), kKernelNs, kKernelNs * 0.03);
  EXPECT_NEAR(a["mean_ns"].get<double>(), kKernelNs, kKernelNs * 0.03);
  // All launches' GPU time: the first launch's plus the timed mean times the others, with
  // its 95% confidence interval (the pretend kernels barely vary: narrow).
  EXPECT_NEAR(a["gpu_ns"].get<double>(), 200 * kKernelNs, 200 * kKernelNs * 0.01);
  ASSERT_TRUE(a["gpu_ns_ci95"].is_number()) << a.dump(2);
  EXPECT_LT(a["gpu_ns_ci95"].get<double>(), 200 * kKernelNs * 0.03);
  EXPECT_FALSE(a["nccl"].get<bool>());
  ASSERT_EQ(a["shapes"].size(), 1u) << a.dump(2);
  EXPECT_EQ(a["shapes"][0]["grid"], json::parse("[1,1,1]"));
  EXPECT_EQ(a["shapes"][0]["block"], json::parse("[32,1,1]"));
  EXPECT_EQ(a["shapes"][0]["timed"], timed - 1) << "the first launch in none of its shapes";
  EXPECT_EQ(a["shapes"][0]["samples"], timed - 1);

  ASSERT_TRUE(k.contains("ncclDevKernel_AllReduce_Sum_f32_RING_LL")) << doc["gpu_time"].dump(2);
  const json& n = k["ncclDevKernel_AllReduce_Sum_f32_RING_LL"];
  EXPECT_TRUE(n["nccl"].get<bool>());
  EXPECT_EQ(n["launches"], 9) << "7 launches, 2 more while a capture was underway";
  EXPECT_EQ(n["timed"], 7) << "every NCCL kernel outside captures";
  EXPECT_NEAR(n["p50_ns"].get<double>(), kKernelNs, kKernelNs * 0.03);

  bool graph_seen = false;
  for (const auto& row : doc["gpu_time"]["kernels"]) {
    if (!row["graph"].get<bool>()) continue;
    graph_seen = true;
    EXPECT_EQ(row["launches"], 3);
    EXPECT_EQ(row["timed"], 1) << "a graph launch timed as one span";
    EXPECT_EQ(row["name"].get<std::string>().rfind("graph 0x", 0), 0u) << row.dump();
  }
  EXPECT_TRUE(graph_seen) << doc["gpu_time"].dump(2);

  ASSERT_EQ(doc["gpu_time"]["processes"].size(), 1u) << doc["gpu_time"].dump(2);
  const json& p = doc["gpu_time"]["processes"][0];
  EXPECT_EQ(p["comm"], "gpu_time_calls") << "read when its ring was mapped";
  EXPECT_EQ(p["skipped_capturing"], 2);
  EXPECT_EQ(p["dropped"], 0);
  EXPECT_EQ(p["errors"], 0);
  EXPECT_EQ(p["launches"], 340);
  EXPECT_TRUE(p["exited"].get<bool>());
  EXPECT_GT(p["timing_cost_ns"].get<std::uint64_t>(), 0u) << "the launching threads' time spent timing";

  std::map<std::string, json> streams;
  for (const auto& s : doc["gpu_time"]["streams"]) streams[s["stream"].get<std::string>()] = s;
  ASSERT_TRUE(streams.contains("0x5000")) << doc["gpu_time"]["streams"].dump(2);
  EXPECT_EQ(streams["0x5000"]["timed"], timed);
  EXPECT_EQ(streams["0x5000"]["device"], 0);
  EXPECT_FALSE(streams.contains("0x7000")) << "nothing timed on the capturing stream";
  // The spans are on the host's clock: ordered within the run.
  EXPECT_LT(streams["0x5000"]["first_ns"].get<std::uint64_t>(),
            streams["0x5000"]["last_ns"].get<std::uint64_t>());
}

// One kernel launched with two shapes that run for different times: a row per shape, each
// with its own figures, the kernel's p50 between them.
TEST(GpuTime, EachLaunchShapeHasItsOwnFigures) {
  const json doc = run_gpu_time();
  auto k = kernels_by_name(doc);
  ASSERT_TRUE(k.contains("kernelB(float*)")) << doc["gpu_time"].dump(2);
  const json& b = k["kernelB(float*)"];
  EXPECT_EQ(b["launches"], 128);
  ASSERT_EQ(b["shapes"].size(), 2u) << b.dump(2);
  EXPECT_EQ(b["shapes_left_out"], 0);
  std::map<std::string, json> by_grid;
  int timed = 0;
  for (const auto& sh : b["shapes"]) {
    by_grid[sh["grid"].dump()] = sh;
    timed += sh["timed"].get<int>();
  }
  EXPECT_EQ(timed + 1, b["timed"].get<int>()) << "the first launch is in none of its shapes";
  ASSERT_TRUE(by_grid.contains("[1,1,1]") && by_grid.contains("[4,1,1]")) << b.dump(2);
  const json& small = by_grid["[1,1,1]"];
  const json& big = by_grid["[4,1,1]"];
  EXPECT_EQ(small["block"], json::parse("[64,1,1]"));
  EXPECT_EQ(small["shared_bytes"], 0);
  EXPECT_EQ(big["block"], json::parse("[128,1,1]"));
  EXPECT_EQ(big["shared_bytes"], 256);
  // 1 in 16 of 64 launches each: 4, less the first launch's block for the small one.
  EXPECT_GE(small["timed"].get<int>(), 3);
  EXPECT_GE(big["timed"].get<int>(), 4);
  EXPECT_NEAR(small["p50_ns"].get<double>(), kKernelNs, kKernelNs * 0.03);
  EXPECT_NEAR(big["p50_ns"].get<double>(), 4 * kKernelNs, 4 * kKernelNs * 0.03);
  EXPECT_FALSE(big["upper_bound"].get<bool>());
}

// Timing paused through the ring (what the step-cost benchmark does between its arms):
// every launch still counted exactly, none timed.
TEST(GpuTime, PausedCountsEveryLaunchAndTimesNone) {
  Subprocess eacgm({"/usr/bin/env", "EACGM_FAKE_KERNEL_US=50", "GPU_TIME_CALLS_PAUSED=1", bin("eacgm"), "run",
                    "--json", "--no-gpu", "--gpu-time", "--", bin("gpu_time_calls"),
                    bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  auto k = kernels_by_name(doc);
  ASSERT_TRUE(k.contains("kernelA(float*)")) << doc["gpu_time"].dump(2);
  EXPECT_EQ(k["kernelA(float*)"]["launches"], 200);
  EXPECT_EQ(k["kernelA(float*)"]["timed"], 0);
  EXPECT_EQ(k["ncclDevKernel_AllReduce_Sum_f32_RING_LL"]["timed"], 0);
  ASSERT_EQ(doc["gpu_time"]["processes"].size(), 1u);
  EXPECT_EQ(doc["gpu_time"]["processes"][0]["launches"], 340);
  EXPECT_EQ(doc["gpu_time"]["processes"][0]["timed"], 0);
}

// A short training-loop-shaped run whose kernels' first launches are slow (lazy module
// loading: 3 ms each here): the slow launches are the program's own time, not timing's, so
// after the warm-up every kernel is still timed within the budget, not starved by a cost
// per timed launch that the cold launches made look a thousand times too high. The
// acceptance: a 5 s run gives each kernel launched 100 times or more at least 10 samples
// (the spans its figures rest on), on a busy host too: there the launches right after a
// step's synchronisation mostly find the stream idle (upper bounds, not samples), and the
// plan counts samples as the agent does; a thread descheduled inside the hook costs the
// budget no more than the hook's own work. The ring is the run's alone: another agent on
// the node (a `serve`, another test's) leaves it to this one, so every name reaches it.
TEST(GpuTime, SlowFirstLaunchesDoNotStarveAShortRun) {
  constexpr int kKernels = 24;
  constexpr double kSeconds = 5;
  Subprocess eacgm({"/usr/bin/env", "EACGM_FAKE_KERNEL_US=20", "EACGM_FAKE_FIRST_LAUNCH_US=3000",
                    bin("eacgm"), "run", "--json", "--no-gpu", "--gpu-time", "--", bin("gpu_time_steps"),
                    bin("fake_libcuda/libcuda.so.1"), fmt::format("{}", kSeconds),
                    fmt::format("{}", kKernels)});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  int seen = 0;
  for (const auto& k : doc["gpu_time"]["kernels"]) {
    if (k["name"].get<std::string>().rfind("step_kernel_", 0) != 0) continue;
    ++seen;
    ASSERT_GE(k["launches"].get<int>(), 100) << k.dump(2);
    EXPECT_GE(k["samples"].get<int>(), 10) << "timed after its first launch: " << k.dump(2);
  }
  EXPECT_EQ(seen, kKernels) << doc["gpu_time"].dump(2);
  ASSERT_EQ(doc["gpu_time"]["processes"].size(), 1u);
  // Timing's own time stays near its budget (0.2% of the run, plus a period's worth)
  // rather than counting the 72 ms of first launches.
  EXPECT_LT(doc["gpu_time"]["processes"][0]["timing_cost_ns"].get<double>(), 0.004 * kSeconds * 1e9)
      << doc["gpu_time"]["processes"][0].dump(2);
}

// A kernel launched right after a step's synchronisation in one step and behind the step's
// other kernels in the next, where the driver cannot hold a stream (the fake refusing
// cuStreamWaitValue32): once it has a span that found work queued (a sample), its
// launches chosen for timing that would find the stream idle are left untimed (their spans
// would be upper bounds the agent sets aside), so its timed launches are samples, not
// wasted budget. A kernel that only ever finds its stream idle keeps its upper bounds (the
// test below without holds).
TEST(GpuTime, LaunchesOntoAnIdleStreamAreLeftUntimedOnceAKernelHasSamples) {
  Subprocess eacgm({"/usr/bin/env", "EACGM_FAKE_KERNEL_US=20", "EACGM_FAKE_NO_HOLDS=1", bin("eacgm"), "run",
                    "--json", "--no-gpu", "--gpu-time", "--", bin("gpu_time_steps"),
                    bin("fake_libcuda/libcuda.so.1"), "3", "8", "alternate"});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  const auto kernels = kernels_by_name(doc);
  ASSERT_EQ(kernels.count("step_kernel_00"), 1u) << doc["gpu_time"].dump(2);
  const json& k = kernels.at("step_kernel_00");
  EXPECT_GE(k["samples"].get<int>(), 10) << k.dump(2);
  EXPECT_FALSE(k["upper_bound"].get<bool>()) << k.dump(2);
  // At most the idle starts before its first queued one (a launch in each of a step or two).
  EXPECT_LE(k["idle_starts"].get<int>(), 4) << k.dump(2);
  EXPECT_GE(k["launches"].get<int>(), 100) << k.dump(2);
}

// step_kernel_00 is launched right after each step's synchronisation: it always finds its
// stream idle. Held (the stream waits until the kernel is queued behind the start event),
// its spans are samples of the kernel's own 20 us, none an idle start, and every hold is
// released by the launching thread. Without holds (the driver refusing them, or
// EACGM_GPU_TIME_HOLD=0) its figures are upper bounds from idle starts, as before.
json steps_with(std::vector<std::string> env) {
  std::vector<std::string> argv = {"/usr/bin/env", "EACGM_FAKE_KERNEL_US=20"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {bin("eacgm"), "run", "--json", "--no-gpu", "--gpu-time", "--",
                           bin("gpu_time_steps"), bin("fake_libcuda/libcuda.so.1"), "3", "8"});
  Subprocess eacgm(argv);
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  EXPECT_EQ(eacgm.err().find("never released"), std::string::npos) << eacgm.err();
  return json::parse(eacgm.out());
}

TEST(GpuTime, ALaunchOntoAnIdleStreamIsHeldUntilItsKernelIsQueued) {
  const json doc = steps_with({});
  const auto kernels = kernels_by_name(doc);
  ASSERT_EQ(kernels.count("step_kernel_00"), 1u) << doc["gpu_time"].dump(2);
  const json& k = kernels.at("step_kernel_00");
  EXPECT_GE(k["samples"].get<int>(), 10) << k.dump(2);
  EXPECT_EQ(k["idle_starts"].get<int>(), 0) << k.dump(2);
  EXPECT_FALSE(k["upper_bound"].get<bool>()) << k.dump(2);
  EXPECT_NEAR(k["p50_ns"].get<double>(), 20'000, 1'000) << k.dump(2);
  const json& p = doc["gpu_time"]["processes"][0];
  EXPECT_GE(p["held"].get<int>(), k["samples"].get<int>()) << p.dump(2);
  EXPECT_EQ(p["holds_expired"].get<int>(), 0) << p.dump(2);

  for (const std::string off : {"EACGM_FAKE_NO_HOLDS=1", "EACGM_GPU_TIME_HOLD=0"}) {
    const json without = steps_with({off});
    const json k0 = kernels_by_name(without).at("step_kernel_00");
    EXPECT_TRUE(k0["upper_bound"].get<bool>()) << off << ": " << k0.dump(2);
    EXPECT_GT(k0["idle_starts"].get<int>(), 0) << off << ": " << k0.dump(2);
    EXPECT_EQ(without["gpu_time"]["processes"][0]["held"].get<int>(), 0) << off;
  }
}

// A held launch whose launching thread stays in the driver (8 ms here, past the watchdog's
// 5 ms, as a driver waiting for the GPU inside the launch would, with the stream waiting
// for that thread): the watchdog releases the stream, the span counts as an idle start,
// and the run says so.
TEST(GpuTime, TheWatchdogReleasesAHoldTheLaunchDoesNotEnd) {
  const json doc = steps_with({"EACGM_FAKE_HELD_LAUNCH_US=8000"});
  const json& p = doc["gpu_time"]["processes"][0];
  EXPECT_GT(p["holds_expired"].get<int>(), 0) << p.dump(2);
  const json k = kernels_by_name(doc).at("step_kernel_00");
  EXPECT_GT(k["idle_starts"].get<int>(), 0) << k.dump(2);
  // The table says so.
  Subprocess text({"/usr/bin/env", "EACGM_FAKE_KERNEL_US=20", "EACGM_FAKE_HELD_LAUNCH_US=8000", bin("eacgm"),
                   "run", "--no-gpu", "--gpu-time", "--", bin("gpu_time_steps"),
                   bin("fake_libcuda/libcuda.so.1"), "1", "2"});
  ASSERT_EQ(text.wait(std::chrono::seconds(120)), 0) << text.err();
  EXPECT_NE(text.out().find("released by the hook's watchdog"), std::string::npos) << text.out();
}

// The hook's tuning: a bad budget is ignored with a line naming it, and timing goes on at
// the default; a valid read-back interval is taken (spans still arrive).
TEST(GpuTime, ABadBudgetIsNamedAndTimingGoesOn) {
  Subprocess eacgm({"/usr/bin/env", "EACGM_FAKE_KERNEL_US=50", "EACGM_GPU_TIME_BUDGET=lots",
                    "EACGM_GPU_TIME_POLL_MS=20", bin("eacgm"), "run", "--json", "--no-gpu", "--gpu-time",
                    "--", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  EXPECT_NE(eacgm.err().find("ignoring EACGM_GPU_TIME_BUDGET=lots"), std::string::npos) << eacgm.err();
  EXPECT_EQ(eacgm.err().find("EACGM_GPU_TIME_POLL_MS"), std::string::npos) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  auto k = kernels_by_name(doc);
  ASSERT_TRUE(k.contains("kernelA(float*)")) << doc["gpu_time"].dump(2);
  EXPECT_EQ(k["kernelA(float*)"]["launches"], 200);
  EXPECT_GT(k["kernelA(float*)"]["timed"], 0);
}

// With NVML sampling on (the FAKE NVML lists the running gpu_time_calls at SM 70%), each
// process's busy share from its timed spans stands beside NVML's SM utilization for it.
TEST(GpuTime, ProcessBusyShareSitsBesideNvml) {
  const std::string dir = eacgm::test::temp_dir();
  const std::string config = dir + "/eacgm.toml";
  std::ofstream(config) << "[gpu]\ninterval_s = 0.05\n";
  Subprocess eacgm({"/usr/bin/env", "EACGM_NVML_LIBRARY=" EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1",
                    "EACGM_FAKE_NVML_SCENARIO=full", "EACGM_FAKE_NVML_GPU_COMM=gpu_time_calls",
                    "EACGM_FAKE_KERNEL_US=50", bin("eacgm"), "run", "--json", "--config", config,
                    "--gpu-time", "--", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  ASSERT_EQ(doc["gpu_time"]["processes"].size(), 1u) << doc["gpu_time"].dump(2);
  const json& p = doc["gpu_time"]["processes"][0];
  EXPECT_EQ(p["devices"], 1);
  ASSERT_TRUE(p["busy_percent"].is_number()) << p.dump(2);
  // The pretend GPU runs the launches back to back: busy nearly all of the timed window.
  EXPECT_GT(p["busy_percent"].get<double>(), 80.0) << p.dump(2);
  EXPECT_LE(p["busy_percent"].get<double>(), 100.0);
  ASSERT_TRUE(p["nvml_sm_percent"].is_number()) << p.dump(2);
  EXPECT_DOUBLE_EQ(p["nvml_sm_percent"].get<double>(), 70.0);
  EXPECT_GT(p["nvml_samples"].get<int>(), 0);
  EXPECT_NE(eacgm.out().find("\"nvml_samples\""), std::string::npos);
}

TEST(GpuTime, TableNamesTheKernels) {
  Subprocess eacgm({"/usr/bin/env", "EACGM_FAKE_KERNEL_US=50", bin("eacgm"), "run", "--no-gpu", "--gpu-time",
                    "--", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  // 12 or 13 of kernelA's 200, 8 or 9 of kernelB's 128, 7 NCCL kernels, 1 graph launch.
  bool found = false;
  for (int timed = 28; timed <= 30; ++timed)
    found = found ||
            eacgm.out().find(fmt::format("gpu time (CUDA events through the hook; {} of 340 launches timed",
                                         timed)) != std::string::npos;
  EXPECT_TRUE(found) << eacgm.out();
  EXPECT_NE(eacgm.out().find("kernelA(float*)"), std::string::npos) << eacgm.out();
}

// Without an agent reading it, the hook removes its ring when the program exits.
TEST(GpuTime, HookAloneLeavesNoFileBehind) {
  Subprocess p({"/usr/bin/env", "LD_PRELOAD=" + bin("libeacgm_hook.so"), "EACGM_GPU_TIME=1",
                "EACGM_FAKE_KERNEL_US=5", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(p.wait(std::chrono::seconds(60)), 0) << p.err();
  EXPECT_EQ(p.out(), "failed=0\n");
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/eacgm-gpu-time." + std::to_string(p.pid())));
}

// The timing thread keeps each context's pool of events stocked: after a context's first
// timed launch (whose two events its launching thread makes: the timing thread did not know
// the context yet), 24 timed launches pending at once take all 48 of their events from the
// pool and make none on the launching thread (cuEventCreate takes a real driver microseconds).
// The program releases its context in an exit handler that runs after the hook's: it exits.
TEST(GpuTime, TimedLaunchesTakeEventsTheTimingThreadMade) {
  Subprocess p({"/usr/bin/env", "LD_PRELOAD=" + bin("libeacgm_hook.so"), "EACGM_GPU_TIME=1",
                "EACGM_FAKE_KERNEL_US=50", bin("gpu_time_events"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(p.wait(std::chrono::seconds(60)), 0) << p.err();
  EXPECT_EQ(p.out(), "first=2 later=0 timed=25 failed=0\n");
}

std::map<std::string, std::uint64_t> calls_by_function(const json& doc) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& f : doc["functions"])
    out[f["function"].get<std::string>()] = f["calls"].get<std::uint64_t>();
  return out;
}

std::map<std::string, std::uint64_t> bytes_by_function(const json& doc) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& f : doc["functions"]) {
    if (f.contains("bytes") && f["bytes"].is_number())
      out[f["function"].get<std::string>()] = f["bytes"].get<std::uint64_t>();
  }
  return out;
}

struct KindWaits {
  std::uint64_t calls = 0, timed = 0;
  double total_ns = 0;
};

// Host waits per kind, every process's summed.
std::map<std::string, KindWaits> waits_by_kind(const json& doc) {
  std::map<std::string, KindWaits> out;
  for (const auto& p : doc["waits"]["processes"]) {
    for (const auto& w : p["waits"]) {
      KindWaits& k = out[w["kind"].get<std::string>()];
      k.calls += w["calls"].get<std::uint64_t>();
      k.timed += w["timed"].get<std::uint64_t>();
      if (w["total_ns"].is_number()) k.total_ns += w["total_ns"].get<double>();
    }
  }
  return out;
}

// --private-driver: the program runs the (fake) libcuda from a copy named
// eacgm-libcuda.so.*, which the driver's uprobes (on files named libcuda.so*) never reach;
// the hook's counts are the launches, and its counts of every driver call stand in for the
// probes' (the same figures as the usual run's probes). The program opens the driver by its path, which the
// hook sends to the copy (one driver in the process). The same run without the option sees
// the launches at the driver's probe, so the first check can fail.
TEST(GpuTime, PrivateDriverLeavesTheDriversUprobesOffAndTheHookCounts) {
  const std::string dir = eacgm::test::temp_dir() + "/private-driver";
  std::filesystem::remove_all(dir);
  auto run = [&](bool private_driver) {
    std::vector<std::string> argv{"/usr/bin/env",
                                  "EACGM_FAKE_KERNEL_US=50",
                                  "EACGM_PRIVATE_DRIVER=" + (private_driver ? dir : std::string()),
                                  "LD_LIBRARY_PATH=" + bin("fake_libcuda"),
                                  bin("eacgm"),
                                  "run",
                                  "--json",
                                  "--no-gpu",
                                  "--gpu-time"};
    if (private_driver) argv.emplace_back("--private-driver");
    argv.insert(argv.end(), {"--", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
    Subprocess eacgm(argv);
    EXPECT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
    return json::parse(eacgm.out());
  };
  const json usual = run(false);
  auto seen = calls_by_function(usual);
  EXPECT_EQ(seen["cuLaunchKernel"] + seen["cuGraphLaunch"], 340u)
      << "the driver's probes see what the hook counts: " << usual["functions"].dump(2);
  EXPECT_FALSE(std::filesystem::exists(dir)) << "no copy without the option";

  const json doc = run(true);
  const auto calls = calls_by_function(doc);
  EXPECT_FALSE(calls.contains("cuInit"))
      << "no driver probe reached the process: " << doc["functions"].dump(2);
  // The driver calls the hook counted stand in for the probes' counts: the same figures.
  const auto usual_bytes = bytes_by_function(usual);
  const auto bytes = bytes_by_function(doc);
  for (const char* f : {"cuLaunchKernel", "cuGraphLaunch", "cuMemAlloc_v2", "cuMemFree_v2",
                        "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoH_v2", "cuMemsetD32Async", "cuCtxSynchronize"}) {
    EXPECT_EQ(calls.contains(f) ? calls.at(f) : 0, seen[f]) << f << ": " << doc["functions"].dump(2);
    EXPECT_EQ(bytes.contains(f) ? bytes.at(f) : 0, usual_bytes.contains(f) ? usual_bytes.at(f) : 0) << f;
  }
  EXPECT_EQ(calls.contains("cuLaunchKernel") ? calls.at("cuLaunchKernel") : 0, 337u);
  EXPECT_EQ(calls.contains("cuMemcpyHtoDAsync_v2") ? calls.at("cuMemcpyHtoDAsync_v2") : 0, 3u);
  EXPECT_EQ(bytes.contains("cuMemcpyHtoDAsync_v2") ? bytes.at("cuMemcpyHtoDAsync_v2") : 0, 3u * 4096);
  EXPECT_EQ(bytes.contains("cuMemsetD32Async") ? bytes.at("cuMemsetD32Async") : 0, 2u * 4000);
  // Its host waits (the context synchronisations, the synchronous copy) timed by the hook,
  // each call: as many as the probes timed in the usual run, with their time.
  const auto usual_waits = waits_by_kind(usual);
  const auto waits = waits_by_kind(doc);
  for (const char* kind : {"device_sync", "blocking_copy"}) {
    ASSERT_TRUE(usual_waits.contains(kind)) << kind << ": " << usual["waits"].dump(2);
    ASSERT_TRUE(waits.contains(kind)) << kind << ": " << doc["waits"].dump(2);
    EXPECT_GT(usual_waits.at(kind).calls, 0u) << kind;
    EXPECT_EQ(waits.at(kind).calls, usual_waits.at(kind).calls) << kind << ": " << doc["waits"].dump(2);
    EXPECT_EQ(waits.at(kind).timed, waits.at(kind).calls) << kind << ": every one timed";
    EXPECT_GT(waits.at(kind).total_ns, 0.0) << kind;
  }
  for (const auto& f : doc["functions"]) {
    if (f["function"] != "cuCtxSynchronize") continue;
    EXPECT_EQ(f["timed"], f["calls"]) << f.dump();
    EXPECT_TRUE(f["p50_ns"].is_number()) << f.dump();
  }
  // Its allocations and frees, which the hook sent one by one: the same ledger as the
  // probes' (1 MiB freed, 64 KiB leaked), and counted once among its calls.
  ASSERT_EQ(usual["memory"]["processes"].size(), 1u) << usual["memory"].dump(2);
  ASSERT_EQ(doc["memory"]["processes"].size(), 1u) << doc["memory"].dump(2);
  const json& ledger = doc["memory"]["processes"][0];
  for (const char* field : {"allocations", "allocated_bytes", "frees", "peak_bytes", "unknown_frees"})
    EXPECT_EQ(ledger[field], usual["memory"]["processes"][0][field]) << field << ": " << ledger.dump(2);
  EXPECT_EQ(ledger["allocations"], 2) << ledger.dump(2);
  EXPECT_EQ(ledger["frees"], 1) << ledger.dump(2);
  EXPECT_TRUE(ledger["exited"].get<bool>()) << ledger.dump(2);
  EXPECT_EQ(ledger["leaks"]["count"], 1) << ledger.dump(2);
  EXPECT_EQ(ledger["leaks"]["bytes"], 65536) << ledger.dump(2);
  EXPECT_EQ(usual["memory"]["processes"][0]["leaks"]["bytes"], 65536) << usual["memory"].dump(2);
  EXPECT_EQ(ledger["leaks"]["largest"][0]["size"], 65536) << ledger.dump(2);
  auto k = kernels_by_name(doc);
  ASSERT_TRUE(k.contains("kernelA(float*)")) << doc["gpu_time"].dump(2);
  EXPECT_EQ(k["kernelA(float*)"]["launches"], 200) << "exact, from the hook";
  ASSERT_EQ(doc["gpu_time"]["processes"].size(), 1u) << doc["gpu_time"].dump(2);
  EXPECT_EQ(doc["gpu_time"]["processes"][0]["launches"], 340);
  EXPECT_TRUE(doc["gpu_time"]["processes"][0]["private_driver"].get<bool>()) << "said in its ring's header";
  EXPECT_FALSE(usual["gpu_time"]["processes"][0]["private_driver"].get<bool>());
  // The device check's comparison (tests/gpu/private_driver_compare.py) passes on the
  // same two reports: it is kept in step with the reports it reads.
  std::ofstream(dir + "/usual.json") << usual.dump();
  std::ofstream(dir + "/private.json") << doc.dump();
  Subprocess compare({"/usr/bin/python3", EACGM_SOURCE_DIR "/tests/gpu/private_driver_compare.py", "fake",
                      dir + "/usual.json", dir + "/private.json"});
  EXPECT_EQ(compare.wait(), 0) << compare.out() << compare.err();
  EXPECT_NE(compare.out().find("PASS: fake"), std::string::npos) << compare.out();
  std::filesystem::remove(dir + "/usual.json");
  std::filesystem::remove(dir + "/private.json");
  int copies = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().rfind("eacgm-libcuda.so.", 0), 0u) << e.path();
    ++copies;
  }
  EXPECT_EQ(copies, 1) << "one copy, no leftover part";
}

// A copy that others may write is never loaded, nor one in a folder where others could
// replace it: the program runs the usual driver and is told why once, at its first
// driver call.
TEST(GpuTime, PrivateDriverRefusesACopyOthersMayWrite) {
  const std::string dir = eacgm::test::temp_dir() + "/planted-driver";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string driver = bin("fake_libcuda/libcuda.so.1");
  struct stat st {};
  ASSERT_EQ(::stat(driver.c_str(), &st), 0);
  // The name the hook gives the copy without an NVIDIA module: the driver's size and time.
  const std::string planted = dir + "/eacgm-libcuda.so." + std::to_string(st.st_size) + "-" +
                              std::to_string(static_cast<long long>(st.st_mtime));
  std::filesystem::copy_file(driver, planted);
  ::chmod(planted.c_str(), 0666);
  Subprocess p({"/usr/bin/env", "LD_PRELOAD=" + bin("libeacgm_hook.so"), "EACGM_GPU_TIME=1",
                "EACGM_PRIVATE_DRIVER=" + dir, "LD_LIBRARY_PATH=" + bin("fake_libcuda"),
                "EACGM_FAKE_KERNEL_US=5", bin("gpu_time_calls"), "libcuda.so.1"});
  ASSERT_EQ(p.wait(std::chrono::seconds(60)), 0) << p.err();
  EXPECT_EQ(p.out(), "failed=0\n");
  EXPECT_NE(p.err().find("eacgm hook: private driver not used (" + planted +
                         ": not a file of this user or root that only its owner may write)"),
            std::string::npos)
      << p.err();
  EXPECT_EQ(p.err().find("private driver not used", p.err().find("private driver not used") + 1),
            std::string::npos)
      << "said once: " << p.err();
  // A folder others may write without the sticky bit: any file in it could be replaced
  // after the check.
  std::filesystem::remove(planted);
  ::chmod(dir.c_str(), 0777);
  Subprocess q({"/usr/bin/env", "LD_PRELOAD=" + bin("libeacgm_hook.so"), "EACGM_GPU_TIME=1",
                "EACGM_PRIVATE_DRIVER=" + dir, "LD_LIBRARY_PATH=" + bin("fake_libcuda"),
                "EACGM_FAKE_KERNEL_US=5", bin("gpu_time_calls"), "libcuda.so.1"});
  ASSERT_EQ(q.wait(std::chrono::seconds(60)), 0) << q.err();
  EXPECT_NE(q.err().find("eacgm hook: private driver not used (" + dir + ": others may replace files in it"),
            std::string::npos)
      << q.err();
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "no copy made there";
}

TEST(GpuTime, PrivateDriverWithoutGpuTimeIsAUsageError) {
  Subprocess eacgm({bin("eacgm"), "run", "--private-driver", "--", "/bin/true"});
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(60)), 2);
  EXPECT_NE(eacgm.err().find("--private-driver needs --gpu-time"), std::string::npos) << eacgm.err();
}

TEST(GpuTime, WithoutACommandIsAUsageError) {
  Subprocess eacgm({bin("eacgm"), "run", "--gpu-time", "--duration", "0.1"});
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(60)), 2);
  EXPECT_NE(eacgm.err().find("--gpu-time needs a command"), std::string::npos) << eacgm.err();
}

}  // namespace

namespace {

// `trace --format perfetto` of a program carrying the hook: its timed spans are slices on a
// "GPU 0" process's stream tracks, each with an ac2g flow from a launch slice on the
// launching thread (Kineto's convention), on the same clock as the calls.
TEST(GpuTime, PerfettoDrawsGpuTracksWithFlowsFromTheLaunches) {
  const std::string out = eacgm::test::temp_dir() + "/gpu_time.perfetto.json";
  Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "--format", "perfetto", "-o", out, "--",
                    "/usr/bin/env", "LD_PRELOAD=" + bin("libeacgm_hook.so"), "EACGM_GPU_TIME=1",
                    "EACGM_FAKE_KERNEL_US=50", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(eacgm.wait(std::chrono::seconds(120)), 0) << eacgm.err();
  std::ifstream in(out);
  const json doc = json::parse(in);
  std::map<std::string, int> kernels;
  std::map<std::uint64_t, int> flow_ends;
  int flow_starts = 0, launches = 0, shaped = 0;
  std::string gpu_process;
  std::uint64_t first_call_us = ~0ull, first_kernel_us = ~0ull;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name" && e["args"]["name"] == "GPU 0") gpu_process = "seen";
    if (ph == "X" && (e["cat"] == "kernel" || e["cat"] == "nccl_kernel" || e["cat"] == "graph")) {
      ++kernels[e["name"].get<std::string>()];
      if (e["args"].contains("grid") && e["args"]["block"].size() == 3) ++shaped;
      EXPECT_NEAR(e["dur"].get<double>(), 50.0, 120.0) << e.dump();
      first_kernel_us =
          std::min<std::uint64_t>(first_kernel_us, static_cast<std::uint64_t>(e["ts"].get<double>()));
    }
    if (ph == "X" && e["cat"] == "gpu_launch") ++launches;
    if (ph == "X" && e["cat"] == "cuda_driver")
      first_call_us =
          std::min<std::uint64_t>(first_call_us, static_cast<std::uint64_t>(e["ts"].get<double>()));
    if (ph == "s" && e["cat"] == "ac2g") ++flow_starts;
    if (ph == "f" && e["cat"] == "ac2g") ++flow_ends[e["id"].get<std::uint64_t>()];
  }
  EXPECT_EQ(gpu_process, "seen");
  const int timed = kernels["kernelA(float*)"];  // one in each block of 16 (sample_launch)
  EXPECT_TRUE(timed == 12 || timed == 13) << doc.dump().substr(0, 2000);
  EXPECT_EQ(kernels["ncclDevKernel_AllReduce_Sum_f32_RING_LL"], 7);
  const int timed_b = kernels["kernelB(float*)"];
  EXPECT_GE(timed_b, 8);
  EXPECT_EQ(launches, timed + timed_b + 8);
  EXPECT_EQ(flow_starts, timed + timed_b + 8);
  EXPECT_EQ(shaped, timed + timed_b + 7) << "every kernel slice has its grid and block; the graph's has none";
  EXPECT_EQ(flow_ends.size(), static_cast<std::size_t>(flow_starts))
      << "one flow end per start, each its own id";
  // The GPU's slices are on the calls' clock: within the run's seconds, not hours apart.
  ASSERT_NE(first_call_us, ~0ull);
  EXPECT_LT(
      first_kernel_us > first_call_us ? first_kernel_us - first_call_us : first_call_us - first_kernel_us,
      10'000'000u);
}

}  // namespace
