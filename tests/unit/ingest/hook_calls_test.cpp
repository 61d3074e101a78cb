// A private-driver process's calls as its hook counted them (cumulative, per driver
// function) become the counted calls the probes would have delivered: deltas per
// (process, function), under the driver catalogue's spec, marked as the hook's; its timed
// host waits (cumulative, per function and bucket) the sampled durations, every call timed.
#include "ingest/hook_calls.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bpf/events.h"

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

}  // namespace
}  // namespace eacgm::ingest
