// OpKernels: launches attributed to the innermost PyTorch op enclosing them on their
// thread, with records arriving as the ring buffer delivers them (a call's record at
// its exit, so an op's record after its launches), and the caps.
#include "analysis/op_kernels.h"

#include <gtest/gtest.h>

#include "analysis/live_analysis.h"

namespace eacgm::analysis {
namespace {

std::shared_ptr<const ProbeInfo> launch_probe(const char* function, const char* domain) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.name = function;
  p->spec.domain = domain;
  p->spec.ret = ReturnKind::kInt32;
  for (const char* name : {"func", "grid", "block"}) {
    ArgSpec a;
    a.name = name;
    a.kind = std::string_view(name) == "func" ? ArgKind::kRaw : ArgKind::kDim3;
    p->spec.args.push_back(a);
  }
  p->spec.derived = {{"kernel", DerivedArg::Op::kKernelName, "func", ""}};
  return p;
}

std::shared_ptr<const ProbeInfo> op_probe(const char* op) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = op;
  p->spec.name = "torch_ops";
  p->spec.domain = "torch";
  p->spec.ret = ReturnKind::kPointer;
  return p;
}

struct Probes {
  std::shared_ptr<const ProbeInfo> runtime = launch_probe("cudaLaunchKernel", "cuda");
  std::shared_ptr<const ProbeInfo> driver = launch_probe("cuLaunchKernel", "cuda_driver");
  std::shared_ptr<const ProbeInfo> gelu = op_probe("aten::gelu");
  std::shared_ptr<const ProbeInfo> linear = op_probe("aten::linear");
  std::shared_ptr<const ProbeInfo> add = op_probe("aten::add");

  static CallEvent at(const std::shared_ptr<const ProbeInfo>& p, std::uint64_t ts, std::uint64_t dur,
                      std::uint32_t tid = 7) {
    CallEvent e;
    e.probe = p;
    e.pid = 7;
    e.tid = tid;
    e.ts_ns = ts;
    e.dur_ns = dur;
    e.has_exit = true;
    e.ret = p->spec.domain == "torch" ? 0x1000 : 0;
    return e;
  }
  CallEvent launch(const char* kernel, std::uint64_t ts, std::uint32_t tid = 7) const {
    CallEvent e = at(runtime, ts, 5, tid);
    e.kernel = kernel;
    return e;
  }
};

const OpKernelRow& op_of(const OpKernelSummary& s, const std::string& op) {
  for (const auto& r : s.ops) {
    if (r.op == op) return r;
  }
  static OpKernelRow none;
  ADD_FAILURE() << "no op " << op;
  return none;
}

TEST(OpKernels, AnOpClaimsTheLaunchesOfItsThreadInsideItsCall) {
  Probes p;
  OpKernels k;
  k.add(p.launch("gelu_kernel", 110));
  k.add(p.launch("gelu_kernel", 120));
  k.add(p.launch("other_thread", 130, /*tid=*/8));
  k.add(Probes::at(p.gelu, 100, 100));  // its record comes at its exit, after its launches
  k.add(p.launch("after", 250));        // outside any op
  auto s = k.summary();
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_EQ(s.ops[0].op, "aten::gelu");
  EXPECT_EQ(s.ops[0].launches, 2u);
  ASSERT_EQ(s.ops[0].kernels.size(), 1u);
  EXPECT_EQ(s.ops[0].kernels[0].kernel, "gelu_kernel");
  EXPECT_EQ(s.ops[0].kernels[0].launches, 2u);
  EXPECT_EQ(s.attributed, 2u);
  EXPECT_EQ(s.unattributed, 2u);  // another thread's, and one after the op
}

TEST(OpKernels, TheInnermostOpWins) {
  Probes p;
  OpKernels k;
  // linear [100, 500] calls add [150, 250]: add's record comes first (it returns first).
  k.add(p.launch("gemm", 120));
  k.add(p.launch("add_kernel", 160));
  k.add(Probes::at(p.add, 150, 100));
  k.add(p.launch("bias", 300));
  k.add(Probes::at(p.linear, 100, 400));
  auto s = k.summary();
  ASSERT_EQ(s.ops.size(), 2u);
  EXPECT_EQ(s.ops[0].op, "aten::linear");
  EXPECT_EQ(s.ops[0].launches, 2u);
  EXPECT_EQ(s.ops[0].kernels[0].kernel, "bias");  // ties by kernel name
  EXPECT_EQ(s.ops[0].kernels[1].kernel, "gemm");
  EXPECT_EQ(op_of(s, "aten::add").launches, 1u);
  EXPECT_EQ(op_of(s, "aten::add").kernels[0].kernel, "add_kernel");
  EXPECT_EQ(s.attributed, 3u);
  EXPECT_EQ(s.unattributed, 0u);
}

TEST(OpKernels, CountsEachLaunchOnceAndIgnoresWhatIsNotALaunch) {
  Probes p;
  OpKernels k;
  k.add(p.launch("k", 110));
  CallEvent nested = Probes::at(p.driver, 111, 2);  // the runtime launch's own driver launch
  nested.kernel = "k";
  nested.nested = true;
  k.add(nested);
  CallEvent captured = p.launch("recorded", 115);  // recorded into a graph, not run
  captured.captured = true;
  k.add(captured);
  k.add(p.launch("", 118));  // name unknown
  CallEvent no_exit = Probes::at(p.gelu, 100, 0);
  no_exit.has_exit = false;
  k.add(no_exit);
  k.add(Probes::at(p.gelu, 100, 50));
  k.add(Probes::at(p.gelu, 100, 50));  // the same launches are not claimed twice
  auto s = k.summary();
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_EQ(s.ops[0].launches, 1u);
  EXPECT_EQ(s.attributed, 1u);
}

TEST(OpKernels, BoundedPerThreadAndInThreadsNamesAndPairs) {
  Probes p;
  OpKernels::Options o;
  o.per_thread = 2;
  o.max_threads = 1;
  o.max_names = 2;
  o.max_pairs = 1;
  OpKernels k(o);
  k.add(p.launch("a", 110));
  k.add(p.launch("a", 120));
  k.add(p.launch("b", 130));  // the oldest launch makes room: never claimed
  k.add(Probes::at(p.gelu, 100, 100));
  auto s = k.summary();
  EXPECT_EQ(s.attributed, 1u);  // a; b's pair is past max_pairs
  EXPECT_EQ(s.untracked, 1u);
  EXPECT_EQ(s.unattributed, 1u);
  k.add(p.launch("c", 300));             // a third kernel name: past max_names
  k.add(p.launch("a", 310, /*tid=*/9));  // another thread takes the only slot
  k.add(Probes::at(p.gelu, 300, 100));   // thread 7 was let go
  s = k.summary();
  EXPECT_EQ(s.untracked, 2u);
  EXPECT_EQ(s.unattributed, 2u);  // the unclaimed launch on thread 9
  EXPECT_EQ(s.attributed, 1u);
}

TEST(OpKernels, LiveAnalysisSnapshotsCarryTheOps) {
  Probes p;
  LiveAnalysis live;
  std::vector<CallEvent> events = {p.launch("gelu_kernel", 110), Probes::at(p.gelu, 100, 100)};
  live.on_calls(events);
  live.on_end(CounterValues{});
  auto snap = live.snapshot();
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->get<analysis::OpKernelSummary>().ops.size(), 1u);
  EXPECT_EQ(snap->get<analysis::OpKernelSummary>().ops[0].kernels[0].kernel, "gelu_kernel");
}

}  // namespace
}  // namespace eacgm::analysis
