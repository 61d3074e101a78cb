// The always-on probe set and the counted probes' kernel entries: one layer per
// operation, per-call where the analysis needs each call, and count rules read from the
// same derived args the per-call path reports.
#include "probe/always_on.h"

#include <gtest/gtest.h>

#include <string>

#include "../common/builtin_spec.h"
#include "bpf/events.h"
#include "probe/bpf_tracer.h"
#include "probe/catalog.h"

namespace eacgm::probe {
namespace {

using test::builtin_spec;

TEST(AlwaysOnRole, DriverOperationsAreCountedAndRuntimeDuplicatesSkipped) {
  for (const char* name : {"cuLaunchKernel", "cuLaunchKernelEx", "cuMemcpyHtoDAsync_v2", "cuMemsetD32Async",
                           "cuStreamSynchronize"}) {
    EXPECT_EQ(builtin_spec(name).always_on, AlwaysOn::kCount) << name;
  }
  for (const char* name : {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamSynchronize",
                           "cudaDeviceSynchronize"}) {
    EXPECT_EQ(builtin_spec(name).always_on, AlwaysOn::kSkip) << name;
  }
  // Events have no driver probe: counted where they are called.
  EXPECT_EQ(builtin_spec("cudaEventRecord").always_on, AlwaysOn::kCount);
}

TEST(AlwaysOnRole, WhatTheAnalysisNeedsPerCallStaysPerCall) {
  for (const char* name : {"cudaMalloc", "cudaFree", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemFreeAsync",
                           "cuMemMap", "cuMemRelease", "cuModuleGetFunction", "__cudaRegisterFunction",
                           "ncclAllReduce", "ncclCommInitRank", kPythonEntrySpec}) {
    EXPECT_EQ(builtin_spec(name).always_on, AlwaysOn::kPerCall) << name;
  }
}

TEST(AlwaysOnRole, HostBlockingCallsAreTimedEveryCall) {
  for (const char* name : {"cuStreamSynchronize", "cuCtxSynchronize", "cuCtxSynchronize_v2",
                           "cudaEventSynchronize", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpy"}) {
    EXPECT_TRUE(times_every_call(builtin_spec(name))) << name;
    EXPECT_EQ(builtin_spec(name).always_on, AlwaysOn::kCount) << name;
  }
  for (const char* name : {"cuLaunchKernel", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoD_v2", "cudaEventRecord",
                           "cudaStreamWaitEvent"}) {
    EXPECT_FALSE(times_every_call(builtin_spec(name))) << name;
  }
  ProbeSpec user;
  user.name = "mySynchronize";
  user.domain = "app";
  EXPECT_FALSE(times_every_call(user)) << "the user's probes are timed as written";
}

TEST(AlwaysOnRole, OnlyCountedGpuWorkIsCycled) {
  const auto info = [](const char* name) {
    ProbeInfo p;
    p.spec = builtin_spec(name);
    p.function = name;
    p.counted = p.spec.always_on == AlwaysOn::kCount;
    return p;
  };
  for (const char* name :
       {"cuLaunchKernel", "cuLaunchKernelEx", "cuMemcpyHtoDAsync_v2", "cuMemsetD32Async"}) {
    EXPECT_TRUE(cycled_probe(info(name), {})) << name;
  }
  // Synchronisations are pinned; events and the other counted calls stay attached.
  for (const char* name :
       {"cuStreamSynchronize", "cuMemcpyDtoH_v2", "cudaEventRecord", "cudaStreamWaitEvent"}) {
    EXPECT_FALSE(cycled_probe(info(name), {})) << name;
  }
  EXPECT_FALSE(cycled_probe(info("cuLaunchKernel"), {"cuLaunchKernel"})) << "the user's pinned";
  ProbeInfo not_counted = info("cuLaunchKernel");
  not_counted.counted = false;  // an old kernel: traced per call
  EXPECT_FALSE(cycled_probe(not_counted, {}));
}

// The names of the specs marked as standing in for the driver's probes.
std::vector<std::string> until_driver(const std::vector<ProbeSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) {
    if (s.until_driver) out.push_back(s.name);
  }
  return out;
}

std::vector<std::string> names_of(const std::vector<ProbeSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

TEST(AlwaysOnRole, ModesChooseTheProbeSet) {
  ProbeSpec user;
  user.name = "mine";
  user.domain = "app";
  std::vector<ProbeSpec> specs = {builtin_spec("cudaLaunchKernel"), builtin_spec("cuLaunchKernel"), user};
  // The runtime launch stands in for the driver's probe (counted until it attaches).
  auto always = specs_for_mode(specs, TraceMode::kAlwaysOn, false);
  ASSERT_EQ(names_of(always), names_of(specs));
  EXPECT_EQ(until_driver(always), std::vector<std::string>{"cudaLaunchKernel"});
  EXPECT_EQ(always[0].always_on, AlwaysOn::kCount);
  EXPECT_EQ(always[1].always_on, AlwaysOn::kCount);
  EXPECT_EQ(always[2].always_on, AlwaysOn::kPerCall);  // the user's probe is as written
  auto per_call = specs_for_mode(specs, TraceMode::kPerCall, false);
  ASSERT_EQ(per_call.size(), 3u);
  EXPECT_TRUE(until_driver(per_call).empty()) << "both layers per call";
  for (const auto& s : per_call) EXPECT_EQ(s.always_on, AlwaysOn::kPerCall) << s.name;
  // One layer per call: the runtime launch stands in for the driver's probe there too.
  auto one_layer = specs_for_mode(specs, TraceMode::kPerCall, true);
  EXPECT_EQ(until_driver(one_layer), std::vector<std::string>{"cudaLaunchKernel"});
  for (const auto& s : one_layer) EXPECT_EQ(s.always_on, AlwaysOn::kPerCall) << s.name;
}

TEST(AlwaysOnRole, ARuntimeCallStandsInOnlyForADriverProbeOfItsOwnOperation) {
  // Without the driver catalog (`--probes cuda`), runtime launches and synchronisations
  // are what sees them: counted for good, in both modes.
  const std::vector<ProbeSpec> runtime = {builtin_spec("cudaLaunchKernel"),
                                          builtin_spec("cudaStreamSynchronize"),
                                          builtin_spec("cudaMemcpyAsync")};
  for (bool one_layer : {false, true}) {
    auto always = specs_for_mode(runtime, TraceMode::kAlwaysOn, one_layer);
    ASSERT_EQ(names_of(always), names_of(runtime));
    EXPECT_TRUE(until_driver(always).empty());
    for (const auto& s : always) EXPECT_EQ(s.always_on, AlwaysOn::kCount) << s.name;
    EXPECT_TRUE(until_driver(specs_for_mode(runtime, TraceMode::kPerCall, one_layer)).empty());
  }
  // A driver probe of another operation leaves the rest where they are: the driver's
  // synchronisation takes only the runtime's synchronisation.
  std::vector<ProbeSpec> with_sync = runtime;
  with_sync.push_back(builtin_spec("cuStreamSynchronize"));
  EXPECT_EQ(until_driver(specs_for_mode(with_sync, TraceMode::kAlwaysOn, false)),
            std::vector<std::string>{"cudaStreamSynchronize"});
  // A copy is a copy whichever way it goes: the driver's asynchronous copy takes the
  // runtime's.
  std::vector<ProbeSpec> with_copy = runtime;
  with_copy.push_back(builtin_spec("cuMemcpyHtoDAsync_v2"));
  EXPECT_EQ(until_driver(specs_for_mode(with_copy, TraceMode::kPerCall, true)),
            std::vector<std::string>{"cudaMemcpyAsync"});
}

TEST(AlwaysOnRole, AStandInIsNeverCycled) {
  // Its link is the one detached when the driver's probes attach, not the duty cycle's.
  ProbeInfo launch;
  launch.function = "cudaLaunchKernel";
  launch.spec = specs_for_mode({builtin_spec("cudaLaunchKernel"), builtin_spec("cuLaunchKernel")},
                               TraceMode::kAlwaysOn, false)[0];
  ASSERT_TRUE(launch.spec.until_driver);
  launch.counted = true;
  EXPECT_FALSE(cycled_probe(launch, {}));
  launch.spec.until_driver = false;
  EXPECT_TRUE(cycled_probe(launch, {}));
}

TEST(EncodeCounted, LaunchesCountByKernelHandleAndCaptureOnlyIt) {
  const eacgm_probe p = encode_probe(builtin_spec("cuLaunchKernel"), true, 3);
  EXPECT_NE(p.flags & EACGM_PROBE_COUNT, 0u);
  EXPECT_NE(p.flags & EACGM_PROBE_RET_ERR, 0u);
  EXPECT_EQ(p.flags & (EACGM_PROBE_EXIT | EACGM_PROBE_STR | EACGM_PROBE_STR2 | EACGM_PROBE_EXIT_ARGS), 0u);
  EXPECT_EQ(p.count.handle_arg, 0);  // f
  EXPECT_EQ(p.count.bytes_arg, EACGM_COUNT_NONE);
  EXPECT_EQ(p.count.sample_shift, 3);
  EXPECT_EQ(p.count.stream_arg, 4);  // hStream, the first stack slot past the dim3s
  EXPECT_EQ(p.nargs, 5u);            // nothing past the stream is read
  // Of those, only the handle and the stream: not the grid and block (the block's
  // last dimensions are stack reads).
  EXPECT_EQ(p.count.capture_mask, (1u << 0) | (1u << 4));
}

// The stack words an entry reads are read at once: cuLaunchKernel's block runs on from
// r8 and r9 into stack word 0, its shared memory and stream are words 1 and 2. Counted,
// only the stream is read: word 2 alone. Memsets take every argument in registers.
TEST(EncodeProbe, StackArgumentsAreReadInOneRead) {
  const eacgm_probe per_call = encode_probe(builtin_spec("cuLaunchKernel"), false);
  EXPECT_EQ(per_call.count.stack_words, 0 | 3 << 4);
  const eacgm_probe counted = encode_probe(builtin_spec("cuLaunchKernel"), true);
  EXPECT_EQ(counted.count.stack_words, 2 | 1 << 4);
  EXPECT_EQ(encode_probe(builtin_spec("cuMemsetD32Async"), false).count.stack_words, 0);
  // Words past what one read holds (EACGM_STACK_WORDS) are each read alone.
  ProbeSpec far;
  far.name = "far";
  far.domain = "app";
  far.args = {{"a", ArgSource::kStack, 1}, {"b", ArgSource::kStack, 9}};
  EXPECT_EQ(encode_probe(far, false).count.stack_words, 0);
  far.args = {{"a", ArgSource::kStack, 3, ArgKind::kDim3}};  // words 3 and 4
  EXPECT_EQ(encode_probe(far, false).count.stack_words, 3 | 2 << 4);
}

TEST(EncodeCounted, AnArgumentReadThroughAPointerChainBringsItsStart) {
  ProbeSpec s;
  s.name = "chained";
  s.domain = "app";
  s.args = {{"ctx", ArgSource::kRegister, 0, ArgKind::kDerefU64},
            {"skip", ArgSource::kRegister, 1},
            {"stream", ArgSource::kArg, 0, ArgKind::kDerefU64}};
  const eacgm_probe p = encode_probe(s, true);
  EXPECT_EQ(p.count.stream_arg, 2);
  EXPECT_EQ(p.count.capture_mask, (1u << 0) | (1u << 2)) << "the chain's start, not the argument between";
}

TEST(EncodeCounted, CopiesAndMemsetsCarryTheirBytes) {
  const eacgm_probe copy = encode_probe(builtin_spec("cuMemcpyHtoDAsync_v2"), true);
  EXPECT_EQ(copy.count.bytes_arg, 2);  // ByteCount
  EXPECT_EQ(copy.count.bytes_shift, 0);
  EXPECT_EQ(copy.count.stream_arg, 3);
  EXPECT_EQ(copy.nargs, 4u);
  EXPECT_EQ(copy.count.capture_mask, (1u << 2) | (1u << 3));
  const eacgm_probe d16 = encode_probe(builtin_spec("cuMemsetD16Async"), true);
  EXPECT_EQ(d16.count.bytes_shift, 1);  // 2-byte elements
  const eacgm_probe d32 = encode_probe(builtin_spec("cuMemsetD32Async"), true);
  EXPECT_EQ(d32.count.bytes_shift, 2);
  // 2D memsets: width (in elements) x height, times the element size.
  const eacgm_probe d2d16 = encode_probe(builtin_spec("cuMemsetD2D16Async"), true);
  EXPECT_NE(d2d16.count.bytes_arg2, EACGM_COUNT_NONE);
  EXPECT_EQ(d2d16.count.bytes_shift, 1);
  const eacgm_probe sync = encode_probe(builtin_spec("cuStreamSynchronize"), true);
  EXPECT_EQ(sync.count.handle_arg, EACGM_COUNT_NONE);
  EXPECT_EQ(sync.count.bytes_arg, EACGM_COUNT_NONE);
  EXPECT_EQ(sync.count.stream_arg, 0);
  EXPECT_EQ(sync.nargs, 1u);
}

TEST(EncodeCounted, PerCallEncodingIsUnchangedByTheCountRule) {
  const eacgm_probe p = encode_probe(builtin_spec("cuLaunchKernel"));
  EXPECT_EQ(p.flags & EACGM_PROBE_COUNT, 0u);
  EXPECT_NE(p.flags & EACGM_PROBE_EXIT, 0u);
  EXPECT_EQ(p.nargs, builtin_spec("cuLaunchKernel").args.size());
}

// The kernel follows each process's open stream captures from the begin's entry to the
// end's return: per-call probes with a return, whichever layer and stream variant.
TEST(EncodeProbe, StreamCaptureBeginsAndEndsAreFlagged) {
  for (const char* name : {"cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph",
                           "cuStreamBeginCapture_v2", "cuStreamBeginCaptureToGraph"}) {
    const eacgm_probe p = encode_probe(builtin_spec(name));
    EXPECT_NE(p.flags & EACGM_PROBE_EXIT, 0u) << name;
    EXPECT_EQ(p.flags & (EACGM_PROBE_CAPTURE_BEGIN | EACGM_PROBE_CAPTURE_END), EACGM_PROBE_CAPTURE_BEGIN)
        << name;
  }
  for (const char* name : {"cudaStreamEndCapture", "cuStreamEndCapture"}) {
    const eacgm_probe p = encode_probe(builtin_spec(name));
    EXPECT_EQ(p.flags & (EACGM_PROBE_CAPTURE_BEGIN | EACGM_PROBE_CAPTURE_END), EACGM_PROBE_CAPTURE_END)
        << name;
  }
  EXPECT_EQ(capture_boundary("cudaStreamBeginCapture_ptsz"), CaptureBoundary::kBegin);
  EXPECT_EQ(capture_boundary("cuStreamEndCapture_ptsz"), CaptureBoundary::kEnd);
  EXPECT_EQ(capture_boundary("cudaStreamGetCaptureInfo"), CaptureBoundary::kNone);
  EXPECT_EQ(encode_probe(builtin_spec("cuLaunchKernel")).flags &
                (EACGM_PROBE_CAPTURE_BEGIN | EACGM_PROBE_CAPTURE_END),
            0u);
}

// A counted call recorded during a capture carries what the graph's follower reads: a
// stream wait its event (streams join a capture through it), which the count skips.
TEST(EncodeCounted, AStreamWaitCarriesItsEventButCountsByItsStream) {
  const eacgm_probe p = encode_probe(builtin_spec("cudaStreamWaitEvent"), true);
  EXPECT_EQ(p.nargs, 2u);
  EXPECT_EQ(p.count.stream_arg, 0);
  EXPECT_EQ(p.count.capture_mask, 1u << 0);
}

// Calls a thread waits in mark it while they run (EACGM_PROBE_WAIT), which needs a
// return: per call with one, or counted (every return is then asked for).
TEST(EncodeWait, WaitingCallsAreMarkedAndOthersAreNot) {
  for (const char* name :
       {"cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuCtxSynchronize_v2", "cudaDeviceSynchronize",
        "cuMemcpyDtoH_v2", "cudaMemcpy", "ncclAllReduce", "ncclCommInitRank"}) {
    EXPECT_TRUE(waits_in_calls(builtin_spec(name))) << name;
    EXPECT_NE(encode_probe(builtin_spec(name)).flags & EACGM_PROBE_WAIT, 0u) << name;
  }
  EXPECT_NE(encode_probe(builtin_spec("cuStreamSynchronize"), true).flags & EACGM_PROBE_WAIT, 0u);
  EXPECT_NE(encode_probe(builtin_spec("cuMemcpyDtoH_v2"), true, 4).flags & EACGM_PROBE_WAIT, 0u);
  for (const char* name : {"cuLaunchKernel", "cudaLaunchKernel", "cudaMalloc", "cuMemcpyHtoDAsync_v2",
                           "cuMemcpyDtoD_v2", "cudaStreamWaitEvent"}) {
    EXPECT_FALSE(waits_in_calls(builtin_spec(name))) << name;
    EXPECT_EQ(encode_probe(builtin_spec(name)).flags & EACGM_PROBE_WAIT, 0u) << name;
    EXPECT_EQ(encode_probe(builtin_spec(name), true).flags & EACGM_PROBE_WAIT, 0u) << name;
  }
  // Without a return nothing would clear the mark.
  ProbeSpec entry_only = builtin_spec("cuStreamSynchronize");
  entry_only.with_exit = false;
  EXPECT_EQ(encode_probe(entry_only).flags & EACGM_PROBE_WAIT, 0u);
  ProbeSpec user = builtin_spec("cuStreamSynchronize");
  user.domain = "app";  // the user's probes are not classified by name
  EXPECT_FALSE(waits_in_calls(user));
  // ... but say so themselves (`waits = true`).
  user.waits = true;
  EXPECT_TRUE(waits_in_calls(user));
  EXPECT_NE(encode_probe(user).flags & EACGM_PROBE_WAIT, 0u);
  user.with_exit = false;
  EXPECT_EQ(encode_probe(user).flags & EACGM_PROBE_WAIT, 0u);
}

}  // namespace
}  // namespace eacgm::probe
