// GpuActivity: per-GPU means, maxima and trapezoid energy over snapshots; lost passes;
// per-process join of traced calls (nested left out) and GPU samples; the process cap;
// exited processes let go past their cap, so that churn leaves the table at its bound.
#include "analysis/gpu_activity.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "../common/cuda_malloc_probe.h"

namespace eacgm::analysis {
namespace {

using std::chrono::seconds;

GpuSnapshot snapshot(int at_s, std::uint32_t util, std::uint32_t power_mw, std::uint64_t used) {
  GpuSnapshot s;
  s.time = std::chrono::system_clock::time_point(seconds(1000 + at_s));
  DeviceSample d;
  d.index = 0;
  d.name = "GPU zero";
  d.uuid = "GPU-0";
  d.utilization_gpu_percent = util;
  d.power_usage_milliwatts = power_mw;
  d.memory_used_bytes = used;
  d.memory_total_bytes = 80ull << 30;
  d.temperature_gpu_celsius = 40 + util / 10;
  d.xid_errors_total = 0;
  s.devices.push_back(d);
  return s;
}

CallEvent call(std::uint32_t pid, const char* comm, std::int64_t ret, bool nested = false) {
  const auto& probe = test::cuda_malloc_probe();
  CallEvent e;
  e.pid = pid;
  e.tid = pid;
  std::snprintf(e.comm.data(), e.comm.size(), "%s", comm);
  e.probe = probe;
  e.has_exit = true;
  e.ret = ret;
  e.nested = nested;
  return e;
}

TEST(GpuActivity, DeviceMeansMaximaAndEnergy) {
  GpuActivity a;
  EXPECT_FALSE(a.has_samples());
  a.add(snapshot(0, 20, 100'000, 1ull << 30));
  a.add(snapshot(2, 80, 300'000, 3ull << 30));
  a.add(snapshot(3, 50, 200'000, 2ull << 30));
  ASSERT_TRUE(a.has_samples());
  auto rows = a.devices();
  ASSERT_EQ(rows.size(), 1u);
  const DeviceActivityRow& d = rows[0];
  EXPECT_EQ(d.name, "GPU zero");
  EXPECT_EQ(d.samples, 3u);
  EXPECT_EQ(d.lost, 0u);
  EXPECT_DOUBLE_EQ(*d.utilization_mean_percent, 50.0);
  EXPECT_EQ(*d.utilization_max_percent, 80u);
  EXPECT_EQ(*d.memory_used_max_bytes, 3ull << 30);
  EXPECT_DOUBLE_EQ(*d.power_mean_watts, 200.0);
  EXPECT_DOUBLE_EQ(*d.power_max_watts, 300.0);
  // (100+300)/2 W * 2 s + (300+200)/2 W * 1 s = 400 + 250 J.
  EXPECT_DOUBLE_EQ(*d.energy_joules, 650.0);
  EXPECT_EQ(*d.temperature_max_celsius, 48u);
  EXPECT_EQ(*d.xid_errors, 0u);
}

TEST(GpuActivity, OneSampleHasNoEnergyAndLostPassesAreCounted) {
  GpuActivity a;
  a.add(snapshot(0, 10, 100'000, 1));
  GpuSnapshot lost = snapshot(1, 0, 0, 0);
  lost.devices[0] = DeviceSample{};
  lost.devices[0].index = 0;
  lost.devices[0].lost = true;
  lost.devices[0].error = "GPU is lost";
  a.add(lost);
  auto d = a.devices().at(0);
  EXPECT_EQ(d.samples, 1u);
  EXPECT_EQ(d.lost, 1u);
  EXPECT_EQ(d.name, "GPU zero");  // kept from the pass that had it
  EXPECT_FALSE(d.energy_joules.has_value());
  EXPECT_DOUBLE_EQ(*d.utilization_mean_percent, 10.0);
}

TEST(GpuActivity, ProcessesJoinCallsAndGpuSamples) {
  GpuActivity a;
  a.add(call(10, "train", 0));
  a.add(call(10, "train", 2));
  a.add(call(10, "train", 0, /*nested=*/true));  // counted once, by its outer call
  a.add(call(20, "helper", 0));
  for (int i = 0; i < 2; ++i) {
    GpuSnapshot s = snapshot(i, 50, 100'000, 1);
    for (unsigned gpu : {0u, 1u}) {
      ProcessSample p;
      p.pid = 10;
      p.gpu_index = gpu;
      p.name = "/usr/bin/python3";
      p.used_memory_bytes = (i + 1) * (gpu + 1) * (256ull << 20);
      p.sm_utilization_percent = 40 + 20 * i;
      s.processes.push_back(p);
    }
    ProcessSample other;  // on the GPU, never traced (a machine-wide trace)
    other.pid = 30;
    other.name = "Xorg";
    other.used_memory_bytes = 1 << 20;
    s.processes.push_back(other);
    a.add(s);
  }
  auto rows = a.processes();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].pid, 10u);
  EXPECT_EQ(rows[0].name, "train");  // the traced thread's name wins over NVML's
  EXPECT_EQ(rows[0].gpu, 0u);
  EXPECT_EQ(rows[0].calls, 2u);
  EXPECT_EQ(rows[0].errors, 1u);
  EXPECT_EQ(rows[0].samples, 2u);
  EXPECT_EQ(*rows[0].memory_max_bytes, 512ull << 20);
  EXPECT_DOUBLE_EQ(*rows[0].sm_mean_percent, 50.0);
  EXPECT_EQ(*rows[0].sm_max_percent, 60u);
  EXPECT_EQ(rows[1].pid, 10u);
  EXPECT_EQ(rows[1].gpu, 1u);
  EXPECT_EQ(rows[1].calls, 2u);
  EXPECT_EQ(*rows[1].memory_max_bytes, 1024ull << 20);
  EXPECT_EQ(rows[2].pid, 20u);
  EXPECT_FALSE(rows[2].gpu.has_value());
  EXPECT_EQ(rows[2].calls, 1u);
  EXPECT_EQ(rows[2].samples, 0u);
  EXPECT_EQ(rows[3].pid, 30u);
  EXPECT_EQ(rows[3].name, "Xorg");
  EXPECT_EQ(rows[3].calls, 0u);
  EXPECT_FALSE(rows[3].sm_mean_percent.has_value());
}

TEST(GpuActivity, ProcessCapCountsTheOverflow) {
  GpuActivity a(/*max_processes=*/2);
  for (std::uint32_t pid = 1; pid <= 4; ++pid) a.add(call(pid, "p", 0));
  a.add(call(1, "p", 0));
  EXPECT_EQ(a.processes().size(), 2u);
  EXPECT_EQ(a.overflow_calls(), 2u);
  EXPECT_EQ(a.processes()[0].calls, 2u);
}

TEST(GpuActivity, FirstAndLastSeenFromCallsAndSamples) {
  GpuActivity a;
  CallEvent first = call(7, "prog", 0);
  first.ts_ns = 5'000'000'000;
  first.dur_ns = 100;
  a.add(first);
  CallEvent second = call(7, "prog", 0);
  second.ts_ns = 6'000'000'000;
  second.dur_ns = 500;
  a.add(second);
  GpuSnapshot s = snapshot(0, 10, 1000, 1);  // at 1000 s
  ProcessSample ps;
  ps.pid = 7;
  ps.gpu_index = 0;
  s.processes.push_back(ps);
  a.add(s);
  auto rows = a.processes();
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].first_seen_ns, 5'000'000'000u);
  EXPECT_EQ(rows[0].last_seen_ns, 1000'000'000'000u) << "the GPU sample is the latest";
  GpuActivity b;
  b.add(second);
  EXPECT_EQ(b.processes()[0].last_seen_ns, 6'000'000'500u) << "a timed call ends at its return";
}

// Process churn: thousands of processes come and go; the table holds the live ones and
// the last max_exited to exit, never more, and every later process is still tracked.
TEST(GpuActivity, ChurnLeavesLiveAndTheLastExitedOnly) {
  GpuActivity a(/*max_processes=*/64, /*max_exited=*/8);
  std::set<std::uint32_t> alive = {1, 2};  // two long-lived processes
  auto is_alive = [&alive](std::uint32_t pid) { return alive.count(pid) != 0; };
  const auto t0 = GpuActivity::Clock::time_point{};
  const auto grace = std::chrono::seconds(2);
  a.add(call(1, "long", 0));
  a.add(call(2, "long", 0));
  for (std::uint32_t pid = 100; pid < 5100; ++pid) {
    a.add(call(pid, "short", 0));
    const auto now = t0 + seconds(pid);
    a.sweep(now, is_alive, 64, grace);          // finds it gone
    a.sweep(now + grace, is_alive, 64, grace);  // past the grace: exited
    ASSERT_LE(a.process_count(), 2u + 8u + 1u) << "at pid " << pid;
  }
  EXPECT_EQ(a.overflow_calls(), 0u) << "every process was tracked";
  EXPECT_EQ(a.exited_count(), 8u);
  EXPECT_EQ(a.exited_dropped(), 5000u - 8u);
  const auto rows = a.processes();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[0].pid, 1u);
  EXPECT_EQ(rows[1].pid, 2u);
  EXPECT_EQ(rows[2].pid, 5092u) << "the last 8 to exit are kept";
  EXPECT_EQ(rows.back().pid, 5099u);
}

// A process gone for less than the grace is not an exited row yet (its last records may
// still be on their way), and a pid that comes back after its exit is a new process.
TEST(GpuActivity, GraceAndAReusedPid) {
  GpuActivity a(/*max_processes=*/8, /*max_exited=*/1);
  std::set<std::uint32_t> alive;
  auto is_alive = [&alive](std::uint32_t pid) { return alive.count(pid) != 0; };
  const auto t0 = GpuActivity::Clock::time_point{};
  a.add(call(7, "first", 0));
  a.add(call(8, "other", 0));
  a.sweep(t0, is_alive, 8, seconds(2));
  a.sweep(t0 + seconds(1), is_alive, 8, seconds(2));
  EXPECT_EQ(a.exited_count(), 0u) << "inside the grace";
  a.sweep(t0 + seconds(2), is_alive, 8, seconds(2));
  EXPECT_EQ(a.exited_dropped(), 1u) << "two exited, one kept";
  ASSERT_EQ(a.process_count(), 1u);
  EXPECT_EQ(a.processes()[0].pid, 8u) << "the last to exit is kept";
  alive = {8};
  a.add(call(8, "second", 0));  // pid 8 reused by a new process
  ASSERT_EQ(a.processes().size(), 1u);
  EXPECT_EQ(a.processes()[0].name, "second");
  EXPECT_EQ(a.processes()[0].calls, 1u) << "the exited process's calls are not the new one's";
  a.add(call(9, "third", 0));
  a.sweep(t0 + seconds(10), is_alive, 8, seconds(2));
  a.sweep(t0 + seconds(12), is_alive, 8, seconds(2));
  // Pid 9's exit pushes the old entry of pid 8 out of the exited list: it is stale, and
  // the running process now under pid 8 keeps its row.
  const auto rows = a.processes();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].pid, 8u);
  EXPECT_EQ(rows[0].calls, 1u);
  EXPECT_EQ(rows[1].pid, 9u);
}

}  // namespace
}  // namespace eacgm::analysis
