// GpuHealth: health events come from changes between a GPU's passes only (a counter that
// rose, a slowdown or flag that began, the GPU lost), never from a level that holds, and
// name the processes on the GPU with the calls each was in; the list is capped.
#include "analysis/gpu_health.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../common/cuda_probe.h"
#include "analysis/live_analysis.h"

namespace eacgm::analysis {
namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;

DeviceSample healthy(unsigned index = 0) {
  DeviceSample d;
  d.index = index;
  d.uuid = "GPU-" + std::to_string(index);
  d.name = "Fake H100";
  d.clock_event_reasons = 0x1;  // idle
  for (auto* zero : {&d.xid_errors_total, &d.ecc_uncorrected_volatile_total}) *zero = 0;
  d.ecc_corrected_volatile_total = 2;
  d.pcie_replay_total = 3;
  d.remapped_rows_correctable = 1;
  d.remapped_rows_uncorrectable = 0;
  d.remapped_rows_pending = d.remapped_rows_failure = false;
  return d;
}

GpuSnapshot pass(std::vector<DeviceSample> devices, std::uint64_t sequence = 0) {
  GpuSnapshot s;
  s.sequence = sequence;
  s.time = std::chrono::system_clock::time_point(std::chrono::seconds(1000 + sequence));
  s.devices = std::move(devices);
  return s;
}

std::vector<std::string> details(const GpuHealth& h) {
  std::vector<std::string> out;
  for (const auto& e : h.summary().events) out.push_back(e.kind + ": " + e.detail);
  return out;
}

TEST(GpuHealth, AFirstPassSetsTheBaselineAndAStablePassAddsNothing) {
  GpuHealth h;
  DeviceSample d = healthy();
  d.clock_event_reasons = 0x8 | 0x4;  // already slowed down: not a transition seen
  d.remapped_rows_pending = true;
  EXPECT_EQ(h.update(pass({d}, 0)), 0u);
  EXPECT_EQ(h.update(pass({d}, 1)), 0u);
  EXPECT_EQ(h.update(pass({d}, 2)), 0u);
  EXPECT_TRUE(h.summary().events.empty());
  EXPECT_EQ(h.summary().total, 0u);
}

TEST(GpuHealth, CountersThatRiseAndSlowdownsThatBeginAreEventsOnceEach) {
  GpuHealth h;
  h.update(pass({healthy()}, 0));
  DeviceSample d = healthy();
  d.xid_errors_total = 1;
  d.last_xid = 79;
  std::tie(d.ecc_uncorrected_volatile_total, d.ecc_corrected_volatile_total) = std::tuple{2u, 5u};
  // A row remapped, and pending until a reset.
  d.remapped_rows_uncorrectable = 1;
  d.remapped_rows_pending = true;
  d.clock_event_reasons = 0x1 | 0x8 | 0x40 | 0x2;  // hw slowdown, hw thermal; app clocks is no slowdown
  d.pcie_replay_total = 10;
  EXPECT_EQ(h.update(pass({d}, 1)), 8u);
  EXPECT_EQ(details(h),
            (std::vector<std::string>{
                "xid: XID 79", "ecc_uncorrected: ECC uncorrected +2", "ecc_corrected: ECC corrected +3",
                "remapped_rows: remapped rows (uncorrectable) +1", "remap_pending: row remapping pending",
                "hw_slowdown: hw_slowdown began", "hw_thermal_slowdown: hw_thermal_slowdown began",
                "pcie_replay: PCIe replays +7"}));
  const GpuHealthEvent& ecc = h.summary().events[1];
  EXPECT_EQ(ecc.count, 2u);
  EXPECT_EQ(ecc.gpu, 0u);
  EXPECT_EQ(ecc.uuid, "GPU-0");
  EXPECT_EQ(ecc.ts_ns, 1001 * kSecond);
  // Held: nothing more. Ended and began again: one more.
  EXPECT_EQ(h.update(pass({d}, 2)), 0u);
  DeviceSample ended = d;
  ended.clock_event_reasons = 0x1;
  EXPECT_EQ(h.update(pass({ended}, 3)), 0u);
  EXPECT_EQ(h.update(pass({d}, 4)), 2u);
  EXPECT_EQ(h.summary().total, 10u);
  // The counter metric's values: twice a slowdown, a count's rise in whole.
  std::map<std::string, std::uint64_t> counted;
  for (const auto& n : h.summary().counts) {
    EXPECT_EQ(n.name, "Fake H100");
    counted[n.kind] = n.events;
  }
  EXPECT_EQ(counted["hw_slowdown"], 2u);
  EXPECT_EQ(counted["ecc_uncorrected"], 2u);
  EXPECT_EQ(counted["pcie_replay"], 7u);
  EXPECT_EQ(counted.size(), 8u);
}

TEST(GpuHealth, AnXidOfTheFirstPassIsTheBaselineAndACounterThatFallsIsNoEvent) {
  GpuHealth h;
  DeviceSample d = healthy(1);
  d.xid_errors_total = 1;
  d.last_xid = 31;
  EXPECT_EQ(h.update(pass({d}, 0)), 0u);
  d.xid_errors_total = 2;
  d.last_xid = 79;
  EXPECT_EQ(h.update(pass({d}, 1)), 1u);
  EXPECT_EQ(details(h), std::vector<std::string>{"xid: XID 79"});
  EXPECT_EQ(h.summary().events[0].gpu, 1u);
  DeviceSample reset = d;
  reset.ecc_corrected_volatile_total = 0;  // the driver reloaded
  reset.xid_errors_total.reset();
  EXPECT_EQ(h.update(pass({reset}, 2)), 0u);
}

TEST(GpuHealth, AFieldMissingFromOnePassKeepsItsLastValue) {
  GpuHealth h;
  h.update(pass({healthy()}, 0));
  DeviceSample gap = healthy();
  gap.ecc_uncorrected_volatile_total.reset();  // the read failed this once
  gap.clock_event_reasons.reset();
  EXPECT_EQ(h.update(pass({gap}, 1)), 0u);
  DeviceSample back = healthy();
  back.ecc_uncorrected_volatile_total = 1;
  EXPECT_EQ(h.update(pass({back}, 2)), 1u);
  EXPECT_EQ(details(h), std::vector<std::string>{"ecc_uncorrected: ECC uncorrected +1"});
}

TEST(GpuHealth, AGpuLostIsOneEventAndItsReturnOnlyANewBaseline) {
  GpuHealth h;
  h.update(pass({healthy(0), healthy(1)}, 0));
  DeviceSample lost;
  lost.index = 1;
  lost.uuid = "GPU-1";
  lost.lost = true;
  lost.error = "GPU is lost";
  EXPECT_EQ(h.update(pass({healthy(0), lost}, 1)), 1u);
  EXPECT_EQ(h.update(pass({healthy(0), lost}, 2)), 0u);
  DeviceSample back = healthy(1);
  back.ecc_corrected_volatile_total = 50;
  back.clock_event_reasons = 0x8;
  EXPECT_EQ(h.update(pass({healthy(0), back}, 3)), 0u);
  EXPECT_EQ(details(h), std::vector<std::string>{"gpu_lost: GPU lost: GPU is lost"});
  EXPECT_EQ(h.summary().events[0].gpu, 1u);
}

TEST(GpuHealth, AnEventNamesTheProcessesOnThatGpuWithTheirCallsInFlight) {
  GpuHealth h;
  h.update(pass({healthy(0), healthy(1)}, 0));
  InflightCall sync;
  sync.call.probe = test::cuda_probe("cudaStreamSynchronize");
  sync.call.pid = 100;
  sync.call.tid = 101;
  sync.call.ts_ns = 999 * kSecond;
  sync.entry_mono_ns = 50 * kSecond;
  const std::string comm = "trainer";
  std::copy(comm.begin(), comm.end(), sync.call.comm.begin());
  h.set_inflight(std::vector{sync}, 53 * kSecond);
  GpuSnapshot next = pass({healthy(0), healthy(1)}, 1);
  next.devices[0].xid_errors_total = 1;
  next.devices[0].last_xid = 79;
  auto on = [](std::uint32_t pid, unsigned gpu, const char* name) {
    ProcessSample p;
    p.pid = pid;
    p.gpu_index = gpu;
    p.gpu_uuid = "GPU-" + std::to_string(gpu);
    p.name = name;
    return p;
  };
  const ProcessSample on0 = on(100, 0, ""), idle = on(200, 0, "idle"), on1 = on(300, 1, "other");
  next.processes = {idle, on1, on0};
  ASSERT_EQ(h.update(next), 1u);
  const GpuHealthEvent& e = h.summary().events.at(0);
  ASSERT_EQ(e.processes.size(), 2u);
  EXPECT_EQ(e.processes[0].pid, 100u);
  EXPECT_EQ(e.processes[0].comm, "trainer");  // NVML gave no name: the traced comm
  ASSERT_EQ(e.processes[0].calls.size(), 1u);
  EXPECT_EQ(e.processes[0].calls[0].tid, 101u);
  EXPECT_EQ(e.processes[0].calls[0].function, "cudaStreamSynchronize");
  EXPECT_EQ(e.processes[0].calls[0].age_ns, 3 * kSecond);
  EXPECT_EQ(e.processes[1].pid, 200u);
  EXPECT_TRUE(e.processes[1].calls.empty());
}

TEST(GpuHealth, TheListKeepsTheLastEventsAndCountsTheOthers) {
  GpuHealth h;
  DeviceSample d = healthy();
  h.update(pass({d}, 0));
  for (std::uint64_t i = 1; i <= GpuHealth::kMaxEvents + 10; ++i) {
    d.pcie_replay_total = *d.pcie_replay_total + 1;
    h.update(pass({d}, i));
  }
  EXPECT_EQ(h.summary().events.size(), GpuHealth::kMaxEvents);
  EXPECT_EQ(h.summary().total, GpuHealth::kMaxEvents + 10);
  EXPECT_EQ(h.summary().dropped, 10u);
  EXPECT_EQ(h.summary().events.back().ts_ns, (1000 + GpuHealth::kMaxEvents + 10) * kSecond);
  ASSERT_EQ(h.summary().counts.size(), 1u);
  EXPECT_EQ(h.summary().counts[0].events, GpuHealth::kMaxEvents + 10);
}

TEST(GpuHealth, TheLiveAnalysisPublishesTheEvents) {
  LiveAnalysis live;
  live.on_gpu(pass({healthy()}, 0));
  DeviceSample d = healthy();
  d.ecc_uncorrected_volatile_total = 1;
  live.on_gpu(pass({d}, 1));
  live.on_tick(std::chrono::steady_clock::now(), {});
  ASSERT_TRUE(live.snapshot());
  const auto& s = live.snapshot()->get<GpuHealthSummary>();
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].kind, "ecc_uncorrected");
}

}  // namespace
}  // namespace eacgm::analysis
