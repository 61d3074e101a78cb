// GpuActivity: per-GPU means, maxima and trapezoid energy over snapshots; lost passes;
// per-process join of traced calls (nested left out) and GPU samples; the process cap.
#include "analysis/gpu_activity.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
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

}  // namespace
}  // namespace eacgm::analysis
