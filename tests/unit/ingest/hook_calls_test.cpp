// A private-driver process's calls as its hook counted them (cumulative, per driver
// function) become the counted calls the probes would have delivered: deltas per
// (process, function), under the driver catalogue's spec, marked as the hook's.
#include "ingest/hook_calls.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

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
  hook.deltas(batch_of({{7, "cuMemcpyHtoDAsync_v2", 3, 12288}, {7, "cuLaunchKernel", 100, 0}}), out);
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
  hook.deltas(batch_of({{7, "cuMemcpyHtoDAsync_v2", 5, 20480}, {7, "cuLaunchKernel", 100, 0}}), out);
  ASSERT_EQ(out.size(), 1u) << "an unchanged count adds nothing";
  EXPECT_EQ(out[0].calls, 2u);
  EXPECT_EQ(out[0].bytes, 8192u);
}

TEST(HookCalls, FunctionsNoProbeCountsAreLeftOut) {
  HookCalls hook;
  std::vector<CallCount> out;
  hook.deltas(batch_of({{7, "cuMemGetInfo_v2", 4, 0}, {7, "cuDevicePrimaryCtxRelease_v2", 1, 0}}), out);
  EXPECT_TRUE(out.empty());
}

TEST(HookCalls, ProcessesAreKeptApartAndForgottenAfterTheirLastRead) {
  HookCalls hook;
  std::vector<CallCount> out;
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 2, 0}, {8, "cuMemAlloc_v2", 5, 0}}), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].probe, out[1].probe) << "one probe per function, shared";
  out.clear();
  GpuRingState gone;
  gone.pid = 7;
  gone.exited = true;
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 3, 0}}, {gone}), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 1u);
  // A new process reusing the pid starts from nothing.
  out.clear();
  hook.deltas(batch_of({{7, "cuMemAlloc_v2", 1, 0}}), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 1u);
}

}  // namespace
}  // namespace eacgm::ingest
