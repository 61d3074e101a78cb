// KernelStats (launch shapes, caps, nested driver launches once), the bytes of copies,
// memsets and NCCL calls in CallSummary (per derived op, D16/D32 element sizes), and
// NcclStats (grouping by communicator and function, caps).
#include <gtest/gtest.h>

#include <cstdio>

#include "analysis/call_summary.h"
#include "analysis/kernel_stats.h"
#include "analysis/live_analysis.h"
#include "analysis/nccl_stats.h"

namespace eacgm::analysis {
namespace {

struct Arg {
  const char* name;
  ArgKind kind = ArgKind::kRaw;
};

std::shared_ptr<const ProbeInfo> probe(const char* function, const char* domain, std::vector<Arg> args,
                                       std::vector<DerivedArg> derived = {}) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->symbol = function;
  p->spec.name = function;
  p->spec.domain = domain;
  p->spec.ret = ReturnKind::kInt32;
  for (const Arg& a : args) {
    ArgSpec s;
    s.name = a.name;
    s.kind = a.kind;
    p->spec.args.push_back(s);
  }
  p->spec.derived = std::move(derived);
  return p;
}

std::uint64_t xy(std::uint32_t x, std::uint32_t y) { return x | (std::uint64_t{y} << 32); }

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::vector<std::uint64_t> args,
               std::int64_t ret = 0, std::uint64_t dur = 1000) {
  CallEvent e;
  e.ts_ns = 1'000'000;
  e.dur_ns = dur;
  e.pid = 100;
  e.tid = 100;
  e.probe = p;
  e.has_exit = true;
  e.ret = ret;
  e.nargs = static_cast<std::uint8_t>(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) e.args[i] = args[i];
  return e;
}

// A launch of `kernel` with grid (gx,gy,gz) and block (bx,by,bz).
CallEvent launch(const std::shared_ptr<const ProbeInfo>& p, const char* kernel, Dim3 grid, Dim3 block,
                 std::int64_t ret = 0) {
  CallEvent e = call(p, {0x400000, xy(grid[0], grid[1]), xy(block[0], block[1])}, ret);
  e.ext[1] = grid[2];
  e.ext[2] = block[2];
  e.kernel = kernel;
  return e;
}

const std::vector<DerivedArg> kKernel = {{"kernel", DerivedArg::Op::kKernelName, "func", ""}};

struct Launches {
  std::shared_ptr<const ProbeInfo> runtime = probe(
      "cudaLaunchKernel", "cuda", {{"func"}, {"grid", ArgKind::kDim3}, {"block", ArgKind::kDim3}}, kKernel);
  std::shared_ptr<const ProbeInfo> driver =
      probe("cuLaunchKernel", "cuda_driver",
            {{"func"}, {"grid", ArgKind::kDim3Split}, {"block", ArgKind::kDim3Split}}, kKernel);
  std::shared_ptr<const ProbeInfo> naming = probe("cuModuleGetFunction", "cuda_driver", {{"func"}, {"name"}});
};

TEST(KernelStats, CountsLaunchesPerKernelAndShapeFromEitherApiAndNestedOnce) {
  Launches p;
  KernelStats k;
  for (int i = 0; i < 3; ++i) k.add(launch(p.runtime, "probe_kernel", {2, 3, 4}, {32, 4, 1}));
  // The runtime launch's own driver launch: nested, the same launch.
  CallEvent nested = launch(p.driver, "probe_kernel", {2, 3, 4}, {32, 4, 1});
  nested.nested = true;
  k.add(nested);
  k.add(launch(p.driver, "probe_kernel", {8, 1, 1}, {256, 1, 1}));
  k.add(launch(p.driver, "other_kernel", {1, 1, 1}, {64, 1, 1}, /*ret=*/98));
  // A naming call carries a kernel name but is not a launch; an unnamed launch is skipped.
  CallEvent named = call(p.naming, {0x1234, 0});
  named.kernel = "probe_kernel";
  k.add(named);
  k.add(launch(p.runtime, "", {1, 1, 1}, {1, 1, 1}));

  auto rows = k.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "probe_kernel");
  EXPECT_EQ(rows[0].launches, 4u);
  EXPECT_EQ(rows[0].errors, 0u);
  ASSERT_EQ(rows[0].shapes.size(), 2u);
  EXPECT_EQ(rows[0].shapes[0].grid, (Dim3{2, 3, 4}));
  EXPECT_EQ(rows[0].shapes[0].block, (Dim3{32, 4, 1}));
  EXPECT_EQ(rows[0].shapes[0].launches, 3u);
  EXPECT_EQ(rows[0].shapes[1].grid, (Dim3{8, 1, 1}));
  EXPECT_EQ(rows[0].shapes[1].launches, 1u);
  EXPECT_EQ(rows[1].name, "other_kernel");
  EXPECT_EQ(rows[1].launches, 1u);
  EXPECT_EQ(rows[1].errors, 1u);
}

TEST(KernelStats, CapsShapesPerKernelAndKernelsAndCountsUnreadableShapes) {
  Launches p;
  KernelStats k(KernelStats::Options{2, 3});
  for (std::uint32_t x = 1; x <= 5; ++x) k.add(launch(p.runtime, "a", {x, 1, 1}, {32, 1, 1}));
  CallEvent faulted = launch(p.runtime, "a", {1, 1, 1}, {32, 1, 1});
  faulted.fault_mask = 1u << 2;  // block unreadable
  k.add(faulted);
  k.add(launch(p.runtime, "b", {1, 1, 1}, {1, 1, 1}));
  k.add(launch(p.runtime, "c", {1, 1, 1}, {1, 1, 1}));
  k.add(launch(p.runtime, "c", {1, 1, 1}, {1, 1, 1}));

  auto rows = k.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[0].launches, 6u);
  EXPECT_EQ(rows[0].shapes.size(), 3u);
  EXPECT_EQ(rows[0].folded_shapes, 2u);
  EXPECT_EQ(rows[0].unknown_shape, 1u);
  EXPECT_EQ(rows[1].name, "b");
  EXPECT_EQ(k.folded_launches(), 2u);
}

struct Copies {
  std::shared_ptr<const ProbeInfo> memcpy =
      probe("cudaMemcpy", "cuda", {{"dst"}, {"src"}, {"count"}, {"kind"}},
            {{"bytes", DerivedArg::Op::kCopy, "count", ""},
             {"kind_name", DerivedArg::Op::kCudaMemcpyKindName, "kind", ""}});
  std::shared_ptr<const ProbeInfo> memcpy2d =
      probe("cudaMemcpy2D", "cuda", {{"dst"}, {"dpitch"}, {"src"}, {"spitch"}, {"width"}, {"height"}},
            {{"bytes", DerivedArg::Op::kProduct, "width", "height"}});
  std::shared_ptr<const ProbeInfo> d8 = probe("cuMemsetD8_v2", "cuda_driver", {{"dst"}, {"value"}, {"count"}},
                                              {{"bytes", DerivedArg::Op::kCopy, "count", ""}});
  std::shared_ptr<const ProbeInfo> d16 =
      probe("cuMemsetD16_v2", "cuda_driver", {{"dst"}, {"value"}, {"count"}},
            {{"bytes", DerivedArg::Op::kTimes2, "count", ""}});
  std::shared_ptr<const ProbeInfo> d32 =
      probe("cuMemsetD32_v2", "cuda_driver", {{"dst"}, {"value"}, {"count"}},
            {{"bytes", DerivedArg::Op::kTimes4, "count", ""}});
  std::shared_ptr<const ProbeInfo> drv_memcpy =
      probe("cuMemcpyHtoD_v2", "cuda_driver", {{"dst"}, {"src"}, {"count"}},
            {{"bytes", DerivedArg::Op::kCopy, "count", ""}});
  // ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm): datatype 7 = float32.
  std::shared_ptr<const ProbeInfo> allreduce =
      probe("ncclAllReduce", "nccl", {{"sendbuff"}, {"recvbuff"}, {"count"}, {"datatype"}, {"op"}, {"comm"}},
            {{"bytes", DerivedArg::Op::kTimesNcclDtype, "count", "datatype"}});
  std::shared_ptr<const ProbeInfo> allgather =
      probe("ncclAllGather", "nccl", {{"sendbuff"}, {"recvbuff"}, {"sendcount"}, {"datatype"}, {"comm"}},
            {{"bytes", DerivedArg::Op::kTimesNcclDtype, "sendcount", "datatype"}});
  std::shared_ptr<const ProbeInfo> comm_init = probe("ncclCommInitRank", "nccl", {{"comm"}, {"nranks"}});
  std::shared_ptr<const ProbeInfo> malloc = probe("cudaMalloc", "cuda", {{"ptr"}, {"size"}});
};

const CallSummaryRow& row_of(const std::vector<CallSummaryRow>& rows, const std::string& function) {
  for (const auto& r : rows) {
    if (r.function == function) return r;
  }
  static CallSummaryRow none;
  ADD_FAILURE() << "no row " << function;
  return none;
}

TEST(CallSummaryBytes, SumsTheDerivedBytesOfEachKindWithMemsetElementSizes) {
  Copies p;
  CallSummary s;
  s.add(call(p.memcpy, {0x1000, 0x2000, 65536, 1}));
  s.add(call(p.memcpy, {0x1000, 0x2000, 100, 1}, /*ret=*/1));  // failed: still what it asked for
  // The runtime copy's own driver copy is nested: not counted twice.
  CallEvent nested = call(p.drv_memcpy, {0x1000, 0x2000, 65536});
  nested.nested = true;
  s.add(nested);
  s.add(call(p.drv_memcpy, {0x1000, 0x2000, 10}));
  s.add(call(p.memcpy2d, {0, 512, 0, 512, 100, 7}));
  s.add(call(p.d8, {0x1000, 0xff, 10}));
  s.add(call(p.d16, {0x1000, 0xffff, 10}));
  s.add(call(p.d32, {0x1000, 0xffffffff, 10}));
  s.add(call(p.d32, {0x1000, 0, 3}));
  CallEvent unreadable = call(p.d32, {0x1000, 0, 1000});
  unreadable.fault_mask = 1u << 2;
  s.add(unreadable);
  s.add(call(p.allreduce, {0, 0, 1000, 7, 0, 0xc0}));   // float32: 4 bytes each
  s.add(call(p.allreduce, {0, 0, 1000, 99, 0, 0xc0}));  // unknown datatype: no bytes
  s.add(call(p.malloc, {0x1000, 4096}));

  auto rows = s.rows();
  EXPECT_EQ(row_of(rows, "cudaMemcpy").bytes, 65636u);
  EXPECT_TRUE(row_of(rows, "cudaMemcpy").has_bytes);
  EXPECT_EQ(row_of(rows, "cuMemcpyHtoD_v2").bytes, 10u);
  EXPECT_EQ(row_of(rows, "cuMemcpyHtoD_v2").nested, 1u);
  EXPECT_EQ(row_of(rows, "cudaMemcpy2D").bytes, 700u);
  EXPECT_EQ(row_of(rows, "cuMemsetD8_v2").bytes, 10u);
  EXPECT_EQ(row_of(rows, "cuMemsetD16_v2").bytes, 20u);
  EXPECT_EQ(row_of(rows, "cuMemsetD32_v2").bytes, 52u);
  EXPECT_EQ(row_of(rows, "ncclAllReduce").bytes, 4000u);
  EXPECT_EQ(row_of(rows, "cudaMalloc").bytes, 0u);
  EXPECT_FALSE(row_of(rows, "cudaMalloc").has_bytes);
}

TEST(BytesRule, SpecWithoutBytesOrWithAnUnknownArgHasNone) {
  Copies p;
  EXPECT_FALSE(BytesRule::of(p.malloc->spec).has_bytes());
  EXPECT_FALSE(BytesRule::of(p.malloc->spec).bytes(call(p.malloc, {1, 2})).has_value());
  auto bad = probe("x", "cuda", {{"a"}}, {{"bytes", DerivedArg::Op::kProduct, "a", "missing"}});
  EXPECT_FALSE(BytesRule::of(bad->spec).has_bytes());
  EXPECT_EQ(BytesRule::of(p.d16->spec).bytes(call(p.d16, {0, 0, 5})), 10u);
}

CallEvent on_comm(CallEvent e, std::uint64_t comm_id, std::int32_t rank, std::int32_t nranks) {
  e.nccl_comm_id = comm_id;
  e.nccl_rank = rank;
  e.nccl_nranks = nranks;
  return e;
}

TEST(NcclStats, GroupsCallsByCommunicatorAndFunctionWithBytesAndDurations) {
  Copies p;
  NcclStats n;
  for (std::uint64_t d : {100, 200, 300, 400}) {
    n.add(on_comm(call(p.allreduce, {0, 0, 1000, 7, 0, 0xc0}, 0, d), 0xaaa, 1, 4));
  }
  n.add(on_comm(call(p.allreduce, {0, 0, 10, 7, 0, 0xc1}, 0, 50), 0xbbb, 0, 2));
  n.add(on_comm(call(p.allgather, {0, 0, 8, 7, 0xc0}, /*ret=*/3, 70), 0xaaa, 1, 4));
  n.add(call(p.allgather, {0, 0, 1, 7, 0xc0}));  // communicator unknown: id 0
  n.add(call(p.comm_init, {0xc0, 4}));           // no bytes: not a collective
  n.add(call(p.memcpy, {0, 0, 65536, 1}));       // not NCCL
  CallEvent nested = on_comm(call(p.allreduce, {0, 0, 1000, 7, 0, 0xc0}), 0xaaa, 1, 4);
  nested.nested = true;
  n.add(nested);

  auto rows = n.rows();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].comm_id, 0xaaau);
  EXPECT_EQ(rows[0].function, "ncclAllReduce");
  EXPECT_EQ(rows[0].calls, 4u);
  EXPECT_EQ(rows[0].bytes, 16000u);
  EXPECT_EQ(rows[0].rank, 1);
  EXPECT_EQ(rows[0].nranks, 4);
  EXPECT_EQ(rows[0].timed, 4u);
  EXPECT_EQ(rows[0].max_ns, 400u);
  EXPECT_NEAR(rows[0].p50_ns, 200.0, 4.0);
  EXPECT_NEAR(rows[0].p99_ns, 400.0, 8.0);
  EXPECT_EQ(rows[1].comm_id, 0xbbbu);
  EXPECT_EQ(rows[1].bytes, 40u);
  EXPECT_EQ(rows[2].comm_id, 0xaaau);
  EXPECT_EQ(rows[2].function, "ncclAllGather");
  EXPECT_EQ(rows[2].bytes, 32u);
  EXPECT_EQ(rows[2].errors, 1u);
  EXPECT_EQ(rows[3].comm_id, 0u);
  EXPECT_EQ(rows[3].rank, -1);
  EXPECT_EQ(rows[3].nranks, -1);
}

TEST(NcclStats, CapsKeysAndCountsTheRest) {
  Copies p;
  NcclStats n(NcclStats::Options{2});
  for (std::uint64_t comm = 1; comm <= 4; ++comm)
    n.add(on_comm(call(p.allreduce, {0, 0, 1, 7, 0, 0}), comm, 0, 2));
  EXPECT_EQ(n.key_count(), 2u);
  EXPECT_EQ(n.folded_calls(), 2u);
}

TEST(LiveAnalysisKernels, SnapshotsCarryKernelsAndNccl) {
  Launches l;
  Copies p;
  LiveAnalysis a;
  std::vector<CallEvent> events = {launch(l.runtime, "k", {1, 1, 1}, {1, 1, 1}),
                                   on_comm(call(p.allreduce, {0, 0, 2, 7, 0, 0}), 9, 0, 2)};
  a.on_calls(events);
  a.on_end(CounterValues{});
  auto snap = a.snapshot();
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->get<analysis::KernelStats>().rows().size(), 1u);
  EXPECT_EQ(snap->get<analysis::KernelStats>().rows()[0].launches, 1u);
  ASSERT_EQ(snap->get<analysis::NcclStats>().rows().size(), 1u);
  EXPECT_EQ(snap->get<analysis::NcclStats>().rows()[0].bytes, 8u);
}

}  // namespace
}  // namespace eacgm::analysis
