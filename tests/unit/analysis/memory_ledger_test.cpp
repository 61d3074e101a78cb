// MemoryLedger: allocations and frees matched by address per process and device, in
// any order; double, unknown and failed calls; nested calls once; leaks at exit; caps.
#include "analysis/memory_ledger.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "analysis/call_summary.h"
#include "analysis/live_analysis.h"

namespace eacgm::analysis {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const ProbeInfo> probe(const char* function, std::vector<const char*> args,
                                       const char* domain = "cuda") {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->symbol = function;
  p->spec.name = function;
  p->spec.domain = domain;
  p->spec.with_exit = true;
  p->spec.ret = ReturnKind::kInt32;
  for (const char* a : args) {
    ArgSpec s;
    s.name = a;
    p->spec.args.push_back(s);
  }
  return p;
}

struct Probes {
  std::shared_ptr<const ProbeInfo> malloc = probe("cudaMalloc", {"ptr", "size"});
  std::shared_ptr<const ProbeInfo> malloc_async = probe("cudaMallocAsync_ptsz", {"ptr", "size", "stream"});
  std::shared_ptr<const ProbeInfo> host = probe("cudaHostAlloc", {"ptr", "size", "flags"});
  std::shared_ptr<const ProbeInfo> pitch = probe("cudaMallocPitch", {"ptr", "pitch", "width", "height"});
  std::shared_ptr<const ProbeInfo> free = probe("cudaFree", {"ptr"});
  std::shared_ptr<const ProbeInfo> free_host = probe("cudaFreeHost", {"ptr"});
  std::shared_ptr<const ProbeInfo> set_device = probe("cudaSetDevice", {"device"});
  std::shared_ptr<const ProbeInfo> drv_alloc = probe("cuMemAlloc_v2", {"ptr", "size"}, "cuda_driver");
  std::shared_ptr<const ProbeInfo> drv_free = probe("cuMemFree_v2", {"ptr"}, "cuda_driver");
  std::shared_ptr<const ProbeInfo> create = probe("cuMemCreate", {"handle", "size"}, "cuda_driver");
  std::shared_ptr<const ProbeInfo> release = probe("cuMemRelease", {"handle"}, "cuda_driver");
  std::shared_ptr<const ProbeInfo> memcpy = probe("cudaMemcpy", {"dst", "src", "count", "kind"});
};

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::vector<std::uint64_t> args,
               std::int64_t ret = 0, std::uint32_t pid = 100, std::uint32_t tid = 100) {
  static std::uint64_t ts = 1'000'000;
  CallEvent e;
  e.ts_ns = ts += 1000;
  e.dur_ns = 500;
  e.pid = pid;
  e.tid = tid;
  std::snprintf(e.comm.data(), e.comm.size(), "%s", "train");
  e.probe = p;
  e.has_exit = true;
  e.ret = ret;
  e.nargs = static_cast<std::uint8_t>(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) e.args[i] = args[i];
  return e;
}

const MemoryLedgerRow* row_of(const MemorySummary& s, std::uint32_t pid, std::int32_t device = 0) {
  for (const auto& r : s.rows) {
    if (r.pid == pid && r.device == device) return &r;
  }
  return nullptr;
}

constexpr std::uint64_t kMiB = 1 << 20;

TEST(MemoryLedger, AllocationsAndFreesInAnyOrderKeepCurrentAndPeakBytes) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.malloc, {0x1000, 100}));
  l.add(call(p.malloc, {0x2000, 300}));
  l.add(call(p.malloc_async, {0x3000, 600, 0x5}));
  l.add(call(p.free, {0x2000}));  // out of allocation order
  l.add(call(p.free, {0x1000}));
  l.add(call(p.malloc, {0x4000, 50}));
  auto s = l.summary();
  ASSERT_EQ(s.rows.size(), 1u);
  const auto& r = s.rows[0];
  EXPECT_EQ(r.pid, 100u);
  EXPECT_EQ(r.comm, "train");
  EXPECT_EQ(r.device, 0) << "no cudaSetDevice: the runtime's default device";
  EXPECT_EQ(r.allocations, 4u);
  EXPECT_EQ(r.allocated_bytes, 1050u);
  EXPECT_EQ(r.frees, 2u);
  EXPECT_EQ(r.live_allocations, 2u);
  EXPECT_EQ(r.live_bytes, 650u);
  EXPECT_EQ(r.peak_bytes, 1000u);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.leak_count, 0u) << "a running process has no leaks yet";
  EXPECT_EQ(r.unknown_frees + r.double_frees + r.failed_allocations, 0u);
}

TEST(MemoryLedger, SizeHistogramIsLog2) {
  EXPECT_EQ(size_bucket(0), 0u);
  EXPECT_EQ(size_bucket(1), 0u);
  EXPECT_EQ(size_bucket(2), 1u);
  EXPECT_EQ(size_bucket(3), 1u);
  EXPECT_EQ(size_bucket(kMiB), 20u);
  EXPECT_EQ(size_bucket(2 * kMiB - 1), 20u);
  EXPECT_EQ(size_bucket(~0ull), 63u);
  Probes p;
  MemoryLedger l;
  l.add(call(p.malloc, {0x1000, kMiB}));
  l.add(call(p.malloc, {0x2000, kMiB + 5}));
  l.add(call(p.malloc, {0x3000, 3 * kMiB}));
  const auto h = l.summary().rows.at(0).size_histogram;  // a copy: summary() is a temporary
  EXPECT_EQ(h[20], 2u);
  EXPECT_EQ(h[21], 1u);
}

TEST(MemoryLedger, DoubleFreeIsAFreeOfAnAddressFreedBeforeAndNotReallocated) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.drv_alloc, {0xa000, 64}));
  l.add(call(p.drv_free, {0xa000}));
  l.add(call(p.drv_free, {0xa000}, 1));  // the driver refuses it: still a double free
  l.add(call(p.drv_free, {0xa000}));
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.frees, 1u);
  EXPECT_EQ(r.double_frees, 2u);
  EXPECT_EQ(r.unknown_frees, 0u);
  EXPECT_EQ(r.live_bytes, 0u);
}

TEST(MemoryLedger, PointerReusedAfterFreeIsLiveAgainAndItsFreeIsNoDoubleFree) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.malloc, {0xb000, 10}));
  l.add(call(p.free, {0xb000}));
  l.add(call(p.malloc, {0xb000, 20}));  // the allocator hands the address out again
  l.add(call(p.free, {0xb000}));
  l.add(call(p.malloc, {0xb000, 30}));
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.allocations, 3u);
  EXPECT_EQ(r.frees, 2u);
  EXPECT_EQ(r.double_frees, 0u);
  EXPECT_EQ(r.live_bytes, 30u);
  EXPECT_EQ(r.peak_bytes, 30u);
}

TEST(MemoryLedger, UnknownFreesAndNullFrees) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.free, {0}));  // cudaFree(0): creates the context, frees nothing
  l.add(call(p.free, {0xdead}));
  l.add(call(p.free, {0xdead}));  // a second free of it: now a double free
  l.add(call(p.free_host, {0xbeef}, 1));
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.unknown_frees, 2u);
  EXPECT_EQ(r.double_frees, 1u);
  EXPECT_EQ(r.frees, 0u);
}

TEST(MemoryLedger, FailedAllocationIsNotLiveAndFailedFreeKeepsTheAllocation) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.malloc, {0x1111, kMiB}, 2));  // cudaErrorMemoryAllocation; ptr is garbage
  l.add(call(p.malloc, {0x2222, 10}));
  l.add(call(p.free, {0x2222}, 700));  // an error: the memory is still held
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.failed_allocations, 1u);
  EXPECT_EQ(r.allocations, 1u);
  EXPECT_EQ(r.failed_frees, 1u);
  EXPECT_EQ(r.live_bytes, 10u);
  l.add(call(p.free, {0x1111}));
  EXPECT_EQ(l.summary().rows.at(0).unknown_frees, 1u) << "the failed allocation never became live";
}

// The ledger's failed allocations and the function rows' errors count the same calls:
// outer calls with an error return (a driver allocation inside a runtime one is the
// runtime's), so per function they agree; the ledger's total is over every allocation
// function, and says which.
TEST(MemoryLedger, FailedAllocationsByFunctionAgreeWithTheFunctionRowsErrors) {
  Probes p;
  MemoryLedger l;
  CallSummary calls;
  auto both = [&](CallEvent e) {
    l.add(e);
    calls.add(e);
  };
  for (int i = 0; i < 3; ++i) {
    CallEvent inner = call(p.drv_alloc, {0, kMiB}, 2);  // the driver's, inside the failing cudaMalloc
    inner.nested = true;
    both(inner);
    both(call(p.malloc, {0, kMiB}, 2));
  }
  both(call(p.host, {0, kMiB, 0}, 2));
  both(call(p.host, {0, kMiB, 0}, 2));
  both(call(p.malloc, {0x5000, kMiB}));
  const auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.failed_allocations, 5u);
  ASSERT_EQ(r.failed_by_function.size(), 2u);
  EXPECT_EQ(r.failed_by_function[0].function, "cudaMalloc");
  EXPECT_EQ(r.failed_by_function[0].calls, 3u);
  EXPECT_EQ(r.failed_by_function[1].function, "cudaHostAlloc");
  EXPECT_EQ(r.failed_by_function[1].calls, 2u);
  std::uint64_t errors = 0;
  std::map<std::string, std::uint64_t> errors_of;
  for (const auto& row : calls.rows()) {
    errors += row.errors;
    errors_of[row.function] = row.errors;
  }
  EXPECT_EQ(errors_of["cudaMalloc"], 3u);
  EXPECT_EQ(errors_of["cudaHostAlloc"], 2u);
  EXPECT_EQ(errors_of["cuMemAlloc_v2"], 0u) << "nested: counted by cudaMalloc";
  EXPECT_EQ(errors, r.failed_allocations);
}

TEST(MemoryLedger, UnreadableOutPointerIsCountedApart) {
  Probes p;
  MemoryLedger l;
  CallEvent e = call(p.malloc, {0, 10});
  e.fault_mask = 1;
  l.add(e);
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.unreadable, 1u);
  EXPECT_EQ(r.allocations, 0u);
  EXPECT_EQ(r.live_bytes, 0u);
}

TEST(MemoryLedger, NestedDriverCallsUnderTheRuntimeAreCountedOnce) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.malloc, {0x7000, 4096}));
  CallEvent inner = call(p.drv_alloc, {0x7000, 4096});
  inner.nested = true;
  l.add(inner);
  CallEvent inner_free = call(p.drv_free, {0x7000});
  inner_free.nested = true;
  l.add(inner_free);
  l.add(call(p.free, {0x7000}));
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.allocations, 1u);
  EXPECT_EQ(r.frees, 1u);
  EXPECT_EQ(r.double_frees, 0u);
  EXPECT_EQ(r.peak_bytes, 4096u);
}

TEST(MemoryLedger, PitchAndVmmAllocationsAndTheirFrees) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.pitch, {0x9000, 512, 500, 10}));  // pitch 512 * height 10
  l.add(call(p.create, {0x9000, 2 * kMiB}));     // a handle: apart from addresses
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.live_allocations, 2u);
  EXPECT_EQ(r.live_bytes, 5120u + 2 * kMiB);
  l.add(call(p.release, {0x9000}));
  r = l.summary().rows.at(0);
  EXPECT_EQ(r.live_bytes, 5120u) << "cuMemRelease frees the handle, not the address";
  l.add(call(p.free, {0x9000}));
  EXPECT_EQ(l.summary().rows.at(0).live_bytes, 0u);
}

TEST(MemoryLedger, DeviceFromTheThreadsSetDevice) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.set_device, {1}, 0, 100, 101));
  l.add(call(p.set_device, {7}, 101, 100, 102));  // failed: the thread stays on 0
  l.add(call(p.malloc, {0x1000, 100}, 0, 100, 101));
  l.add(call(p.malloc, {0x2000, 200}, 0, 100, 102));
  l.add(call(p.free, {0x1000}, 0, 100, 102));  // freed from another thread: device 1's
  auto s = l.summary();
  ASSERT_EQ(s.rows.size(), 2u);
  ASSERT_NE(row_of(s, 100, 1), nullptr);
  EXPECT_EQ(row_of(s, 100, 1)->frees, 1u);
  EXPECT_EQ(row_of(s, 100, 1)->live_bytes, 0u);
  EXPECT_EQ(row_of(s, 100, 1)->peak_bytes, 100u);
  ASSERT_NE(row_of(s, 100, 0), nullptr);
  EXPECT_EQ(row_of(s, 100, 0)->live_bytes, 200u);
}

TEST(MemoryLedger, ExitTurnsUnfreedAllocationsIntoLeaksAndKeepsOnlyTheSummary) {
  Probes p;
  MemoryLedger::Options o;
  o.largest_leaks = 2;
  MemoryLedger l(o);
  l.add(call(p.drv_alloc, {0x1000, 1 * kMiB}));
  l.add(call(p.drv_alloc, {0x2000, 2 * kMiB}));
  l.add(call(p.drv_alloc, {0x3000, 3 * kMiB}));
  l.add(call(p.host, {0x4000, 64, 0}));
  l.add(call(p.drv_alloc, {0x5000, 9 * kMiB}));
  l.add(call(p.drv_free, {0x5000}));
  l.add(call(p.malloc, {0x6000, 5}, 0, 200));  // another process, still running
  l.finalize(100);
  l.finalize(100);  // gone already: nothing happens
  EXPECT_EQ(l.process_count(), 1u);
  EXPECT_EQ(l.exited_count(), 1u);
  auto s = l.summary();
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].pid, 200u) << "running processes first";
  const auto& r = s.rows[1];
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.leak_count, 4u);
  EXPECT_EQ(r.leak_bytes, 6 * kMiB + 64);
  ASSERT_EQ(r.largest_leaks.size(), 2u);
  EXPECT_EQ(r.largest_leaks[0].ptr, 0x3000u);
  EXPECT_EQ(r.largest_leaks[0].size, 3 * kMiB);
  EXPECT_EQ(r.largest_leaks[0].kind, AllocKind::kDevice);
  EXPECT_GT(r.largest_leaks[0].ts_ns, 0u);
  EXPECT_EQ(r.largest_leaks[1].size, 2 * kMiB);
  EXPECT_EQ(r.peak_bytes, 15 * kMiB + 64);
  // The pid is used again by a new process: it starts from nothing.
  l.add(call(p.free, {0x1000}));
  s = l.summary();
  EXPECT_EQ(row_of(s, 100)->unknown_frees, 1u);
  EXPECT_FALSE(row_of(s, 100)->exited);
}

TEST(MemoryLedger, ProcessesLiveAllocationsFreedAddressesAndExitedAreBounded) {
  Probes p;
  MemoryLedger::Options o;
  o.max_processes = 2;
  o.max_live_per_process = 3;
  o.max_freed_per_process = 2;
  o.max_exited = 2;
  MemoryLedger l(o);
  for (std::uint64_t i = 0; i < 5; ++i) l.add(call(p.malloc, {0x1000 * (i + 1), 10}));
  auto r = l.summary().rows.at(0);
  EXPECT_EQ(r.allocations, 5u);
  EXPECT_EQ(r.live_allocations, 3u);
  EXPECT_EQ(r.dropped, 2u);
  EXPECT_EQ(r.live_bytes, 30u);
  l.add(call(p.free, {0x5000}));  // was dropped: unknown
  EXPECT_EQ(l.summary().rows.at(0).unknown_frees, 1u);
  // Freed addresses remembered: 0x5000, 0x1000, then 0x2000 pushes 0x5000 out.
  l.add(call(p.free, {0x1000}));
  l.add(call(p.free, {0x2000}));
  l.add(call(p.free, {0x1000}));
  l.add(call(p.free, {0x5000}));
  r = l.summary().rows.at(0);
  EXPECT_EQ(r.double_frees, 1u);
  EXPECT_EQ(r.unknown_frees, 2u) << "0x5000 was forgotten: unknown again";

  l.add(call(p.malloc, {0x1, 1}, 0, 201));
  l.add(call(p.malloc, {0x1, 1}, 0, 202));  // a third process: over the cap
  EXPECT_EQ(l.process_count(), 2u);
  EXPECT_EQ(l.summary().overflow_calls, 1u);
  for (std::uint32_t pid : {100u, 201u}) l.finalize(pid);
  for (std::uint32_t pid : {300u, 301u}) {
    l.add(call(p.malloc, {0x1, 1}, 0, pid));
    l.finalize(pid);
  }
  auto s = l.summary();
  EXPECT_EQ(l.exited_count(), 2u);
  EXPECT_EQ(s.exited_dropped, 2u);
  std::set<std::uint32_t> pids;
  for (const auto& row : s.rows) pids.insert(row.pid);
  EXPECT_EQ(pids, (std::set<std::uint32_t>{300, 301})) << "the last exited are kept";
  // The leak totals count every exit, the summaries let go included: 0x3000 (10 bytes)
  // of pid 100, then one byte each of 201, 300 and 301.
  EXPECT_EQ(s.leaks_total, 4u);
  EXPECT_EQ(s.leaked_bytes_total, 13u);
  EXPECT_EQ(MemoryLedger(l).summary().leaked_bytes_total, 13u) << "a snapshot copy keeps them";
}

TEST(MemoryLedger, SweepFinalizesProcessesGoneForTheGraceOnly) {
  Probes p;
  MemoryLedger l;
  for (std::uint32_t pid : {10u, 11u, 12u}) l.add(call(p.malloc, {0x10, 8}, 0, pid));
  std::set<std::uint32_t> alive = {10, 12};
  auto is_alive = [&](std::uint32_t pid) { return alive.contains(pid); };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(l.sweep(t0, is_alive, 100, 2s), 0u) << "gone, but its last records may be on their way";
  EXPECT_EQ(l.sweep(t0 + 1s, is_alive, 100, 2s), 0u);
  EXPECT_EQ(l.sweep(t0 + 2s, is_alive, 100, 2s), 1u);
  EXPECT_EQ(l.process_count(), 2u);
  // A bounded sweep checks a few at a time, round robin.
  alive.clear();
  std::size_t finalized = 0;
  for (int i = 0; i < 4; ++i) finalized += l.sweep(t0 + 3s, is_alive, 1, 0s);
  EXPECT_EQ(finalized, 2u);
  EXPECT_EQ(l.process_count(), 0u);
  EXPECT_EQ(l.summary().rows.size(), 3u);
}

TEST(MemoryLedger, OtherCallsAndSpecsWithoutTheArgumentsAreIgnored) {
  Probes p;
  MemoryLedger l;
  l.add(call(p.memcpy, {1, 2, 3, 4}));
  l.add(call(probe("cudaMalloc", {"something"}), {0x1, 1}));
  CallEvent entry_only = call(p.malloc, {0x1, 1});
  entry_only.has_exit = false;
  l.add(entry_only);
  EXPECT_TRUE(l.summary().empty());
  EXPECT_EQ(l.process_count(), 0u);
}

TEST(MemoryLedger, LiveAnalysisFinalizesExitedProcessesAndSnapshotsTheLedger) {
  Probes p;
  LiveAnalysis live;
  std::set<std::uint32_t> alive = {100};
  live.set_process_alive([&](std::uint32_t pid) { return alive.contains(pid); });
  std::vector<CallEvent> batch = {call(p.drv_alloc, {0x1000, kMiB}), call(p.drv_alloc, {0x2000, 2 * kMiB}),
                                  call(p.drv_free, {0x2000})};
  live.on_calls(batch);
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  auto snap = live.snapshot();
  ASSERT_EQ(snap->get<analysis::MemorySummary>().rows.size(), 1u);
  EXPECT_FALSE(snap->get<analysis::MemorySummary>().rows[0].exited);
  EXPECT_EQ(snap->get<analysis::MemorySummary>().rows[0].live_bytes, kMiB);
  alive.clear();
  live.on_end(CounterValues{});
  snap = live.snapshot();
  ASSERT_EQ(snap->get<analysis::MemorySummary>().rows.size(), 1u);
  EXPECT_TRUE(snap->get<analysis::MemorySummary>().rows[0].exited)
      << "at the end a gone process is finalized at once";
  EXPECT_EQ(snap->get<analysis::MemorySummary>().rows[0].leak_count, 1u);
  EXPECT_EQ(snap->get<analysis::MemorySummary>().rows[0].leak_bytes, kMiB);
}

}  // namespace
}  // namespace eacgm::analysis
