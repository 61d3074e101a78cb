// A private-driver process's calls as its hook counted them (cumulative, per driver
// function) become the counted calls the probes would have delivered: deltas per
// (process, function), under the driver catalogue's spec, marked as the hook's; its timed
// host waits (cumulative, per function and bucket) the sampled durations, every call timed.
#include "ingest/hook_calls.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bpf/events.h"
#include "core/clock.h"

namespace eacgm::ingest {
namespace {

GpuTimeBatch batch_of(std::vector<GpuCallCount> calls, std::vector<GpuRingState> rings = {}) {
  GpuTimeBatch b;
  b.calls = std::move(calls);
  b.rings = std::move(rings);
  return b;
}

std::map<std::string, CallCount> by_function(const std::vector<CallCount>& counts) {
  std::map<std::string, CallCount> out;
  for (const CallCount& c : counts) out[c.probe->function] = c;
  return out;
}

TEST(HookCalls, CumulativeCountsBecomeDeltasUnderTheCatalogueSpec) {
  HookCalls hook;
  std::vector<CallCount> out;
  std::vector<CallTimings> timings;
  hook.deltas(batch_of({{7, "cuMemcpyHtoDAsync_v2", 3, 12288}, {7, "cuLaunchKernel", 100, 0}}), out, timings);
  auto f = by_function(out);
  ASSERT_EQ(f.size(), 2u);
  const CallCount& copy = f["cuMemcpyHtoDAsync_v2"];
  EXPECT_EQ(copy.pid, 7u);
  EXPECT_EQ(copy.calls, 3u);
  EXPECT_EQ(copy.bytes, 12288u);
  EXPECT_FALSE(copy.estimated);
  EXPECT_TRUE(copy.probe->hook);
  EXPECT_TRUE(copy.probe->counted);
  EXPECT_FALSE(copy.probe->cycled);
  EXPECT_EQ(copy.probe->spec.domain, "cuda_driver");
  EXPECT_EQ(copy.probe->spec.work, GpuWork::kCopy);
  EXPECT_EQ(copy.probe->spec.direction, "HtoD");
  EXPECT_GE(copy.probe->id, kHookProbeIdBase);
  EXPECT_NE(f["cuLaunchKernel"].probe->id, copy.probe->id);

  out.clear();
  hook.deltas(batch_of({{7, "cuMemcpyHtoDAsync_v2", 5, 20480}, {7, "cuLaunchKernel", 100, 0}}), out, timings);
  ASSERT_EQ(out.size(), 1u) << "an unchanged count adds nothing";
  EXPECT_EQ(out[0].calls, 2u);
  EXPECT_EQ(out[0].bytes, 8192u);
}

TEST(HookCalls, FunctionsNoProbeCountsAreLeftOut) {
  HookCalls hook;
  std::vector<CallCount> out;
  std::vector<CallTimings> timings;
  hook.deltas(batch_of({{7, "cuMemGetInfo_v2", 4, 0}, {7, "cuDevicePrimaryCtxRelease_v2", 1, 0}}), out,
              timings);
  EXPECT_TRUE(out.empty());
}

TEST(HookCalls, ProcessesAreKeptApartAndForgottenAfterTheirLastRead) {
  HookCalls hook;
  std::vector<CallCount> out;
  std::vector<CallTimings> timings;
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 2, 0}, {8, "cuMemAlloc_v2", 5, 0}}), out, timings);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].probe, out[1].probe) << "one probe per function, shared";
  out.clear();
  GpuRingState gone;
  gone.pid = 7;
  gone.exited = true;
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 3, 0}}, {gone}), out, timings);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 1u);
  // A new process reusing the pid starts from nothing.
  out.clear();
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 1, 0}}), out, timings);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 1u);
}

GpuTimeBatch waits_of(std::vector<GpuWaitTimes> waits, std::vector<GpuRingState> rings = {}) {
  GpuTimeBatch b;
  b.waits = std::move(waits);
  b.rings = std::move(rings);
  return b;
}

TEST(HookCalls, TimedWaitsBecomeDurationsFiledAtTheirMean) {
  HookCalls hook;
  std::vector<CallCount> counts;
  std::vector<CallTimings> out;
  // cuStreamSynchronize: 4 calls of 1.0-1.1 ms in one of the hook's buckets, 1 failed;
  // cuCtxSynchronize: 2 in another.
  hook.deltas(waits_of({{7, "cuStreamSynchronize", 200, 4, 4'200'000, 1},
                        {7, "cuCtxSynchronize", 150, 2, 60'000, 0}}),
              counts, out);
  EXPECT_TRUE(counts.empty());
  ASSERT_EQ(out.size(), 2u);
  const CallTimings& sync = out[0].probe->function == "cuStreamSynchronize" ? out[0] : out[1];
  EXPECT_EQ(sync.pid, 7u);
  EXPECT_TRUE(sync.probe->hook);
  EXPECT_EQ(sync.count, 4u);
  EXPECT_EQ(sync.sum_ns, 4'200'000u);
  EXPECT_EQ(sync.errors, 1u);
  EXPECT_EQ(sync.bucket, eacgm_hist_key(1'050'000)) << "the mean's bucket in the agent's scheme";

  // The same bucket later: only what was added, at its own mean.
  out.clear();
  hook.deltas(waits_of({{7, "cuStreamSynchronize", 200, 6, 6'400'000, 1},
                        {7, "cuCtxSynchronize", 150, 2, 60'000, 0}}),
              counts, out);
  ASSERT_EQ(out.size(), 1u) << "an unchanged bucket adds nothing";
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[0].sum_ns, 2'200'000u);
  EXPECT_EQ(out[0].errors, 0u);
  EXPECT_EQ(out[0].bucket, eacgm_hist_key(1'100'000));

  // Gone, then a new process on the same pid starts from nothing.
  out.clear();
  GpuRingState gone;
  gone.pid = 7;
  gone.exited = true;
  hook.deltas(waits_of({}, {gone}), counts, out);
  hook.deltas(waits_of({{7, "cuStreamSynchronize", 200, 1, 1'000'000, 0}}), counts, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 1u);
  EXPECT_EQ(out[0].sum_ns, 1'000'000u);
}

TEST(HookCalls, MemoryCallsBecomeTheCallsTheProbesWouldHaveMade) {
  HookCalls hook;
  GpuTimeBatch b;
  GpuMemoryCall alloc;
  alloc.pid = 7;
  alloc.tid = 8;
  alloc.function = "cuMemAlloc_v2";
  alloc.begin_ns = monotonic_ns();
  alloc.duration_ns = 5000;
  alloc.address = 0x7f0000001000;
  alloc.bytes = 1 << 20;
  GpuMemoryCall pitch = alloc;
  pitch.function = "cuMemAllocPitch_v2";
  pitch.address = 0x7f0000200000;
  pitch.bytes = 512;  // the pitch
  pitch.rows = 64;
  GpuMemoryCall free_call = alloc;
  free_call.function = "cuMemFree_v2";
  free_call.bytes = 0;
  free_call.by_runtime = true;  // under cudaFree
  free_call.result = 1;
  GpuMemoryCall unknown = alloc;
  unknown.function = "cuNotInTheCatalogue";
  b.memory = {alloc, pitch, unknown, free_call};
  GpuRingState ring;
  ring.pid = 7;
  ring.comm = "python3-with-a-long-name";
  b.rings = {ring};

  std::vector<CallEvent> out;
  hook.events(b, out);
  ASSERT_EQ(out.size(), 3u) << "a function the catalogue does not list is left out";
  auto arg = [](const CallEvent& e, const char* name) -> std::uint64_t {
    const auto& args = e.probe->spec.args;
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].name == name) {
        EXPECT_EQ(e.fault_mask & (1u << i), 0u) << name;
        return e.args[i];
      }
    ADD_FAILURE() << "no argument " << name;
    return 0;
  };
  const CallEvent& a = out[0];
  EXPECT_EQ(a.probe->function, "cuMemAlloc_v2");
  EXPECT_TRUE(a.probe->hook);
  EXPECT_FALSE(a.probe->counted) << "a call, not a count";
  EXPECT_EQ(a.probe->spec.domain, "cuda_driver");
  EXPECT_EQ(a.pid, 7u);
  EXPECT_EQ(a.tid, 8u);
  EXPECT_EQ(a.comm_view(), "python3-with-a-");
  EXPECT_TRUE(a.has_exit);
  EXPECT_EQ(a.dur_ns, 5000u);
  EXPECT_EQ(a.ret, 0);
  EXPECT_FALSE(a.nested);
  EXPECT_NEAR(static_cast<double>(a.ts_ns), static_cast<double>(realtime_ns()), 60e9) << "on the Unix clock";
  EXPECT_EQ(arg(a, "ptr"), 0x7f0000001000u);
  EXPECT_EQ(arg(a, "size"), 1u << 20);

  EXPECT_EQ(out[1].probe->function, "cuMemAllocPitch_v2");
  EXPECT_EQ(arg(out[1], "pitch"), 512u);
  EXPECT_EQ(arg(out[1], "height"), 64u);
  EXPECT_NE(out[1].fault_mask, 0) << "the width, not sent, is unread";

  EXPECT_EQ(out[2].probe->function, "cuMemFree_v2");
  EXPECT_TRUE(out[2].nested) << "libcudart made it: its probe counts it";
  EXPECT_EQ(out[2].ret, 1);
  EXPECT_EQ(arg(out[2], "ptr"), 0x7f0000001000u);

  // The counts' probe of the same function is another one, marked counted.
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 1, 0}}), counts, timings);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_TRUE(counts[0].probe->counted);
  EXPECT_NE(counts[0].probe, a.probe);
}

}  // namespace
}  // namespace eacgm::ingest
