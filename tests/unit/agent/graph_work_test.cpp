// GraphCapture (ingest) with GpuWorkStats (analysis), as the agent chains them: work on a capturing stream
// (and on a stream joined through an event) is recorded, not executed; each graph launch counts its
// executable graph's work once, a runtime call's nested driver call adding nothing.
#include <gtest/gtest.h>

#include "analysis/gpu_work.h"
#include "ingest/graph_capture.h"
#include "probe/catalog.h"

namespace eacgm::ingest {
namespace {

std::shared_ptr<const ProbeInfo> builtin(const std::string& name) {
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name == name) {
        auto p = std::make_shared<ProbeInfo>();
        p->function = name;
        p->spec = s;
        return p;
      }
    }
  }
  ADD_FAILURE() << "no built-in probe " << name;
  return nullptr;
}

int arg(const ProbeInfo& p, const std::string& name) {
  for (std::size_t i = 0; i < p.spec.args.size(); ++i) {
    if (p.spec.args[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << p.function << " has no arg " << name;
  return 0;
}

CallEvent call(const std::string& function, std::map<std::string, std::uint64_t> args, bool nested = false) {
  CallEvent e;
  e.pid = 7;
  e.probe = builtin(function);
  e.has_exit = true;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  e.nested = nested;
  for (const auto& [name, v] : args) e.args[static_cast<std::size_t>(arg(*e.probe, name))] = v;
  return e;
}

struct Pipeline {
  GraphCapture graphs;
  analysis::GpuWorkStats work;
  CallEvent run(CallEvent e, const char* kernel = "") {
    e.kernel = kernel;
    graphs.enrich(e);
    work.add(e);
    return e;
  }
};

TEST(GraphCapture, CapturedWorkRunsOncePerGraphLaunchWithNamesBytesAndTheLaunchStream) {
  Pipeline p;
  p.run(call("cuStreamBeginCapture_v2", {{"stream", 0x20}}, true));
  p.run(call("cudaStreamBeginCapture", {{"stream", 0x20}}));
  // A runtime launch and the driver launch it makes: one node.
  EXPECT_TRUE(p.run(call("cuLaunchKernel", {{"f", 0x1}, {"stream", 0x20}}, true), "k").captured);
  EXPECT_TRUE(p.run(call("cudaLaunchKernel", {{"func", 0x2}, {"stream", 0x20}}), "k").captured);
  p.run(call("cudaMemsetAsync", {{"count", 256}, {"stream", 0x20}}));
  // A second stream joins the capture through an event recorded in it.
  p.run(call("cudaEventRecord", {{"event", 0xe}, {"stream", 0x20}}));
  p.run(call("cudaStreamWaitEvent", {{"stream", 0x40}, {"event", 0xe}}));
  EXPECT_TRUE(p.run(call("cudaMemcpyAsync", {{"count", 64}, {"kind", 1}, {"stream", 0x40}})).captured);
  p.run(call("cuStreamEndCapture", {{"stream", 0x20}, {"graph", 0x9}}, true));
  p.run(call("cudaStreamEndCapture", {{"stream", 0x20}, {"graph", 0x9}}));
  // Not capturing any more: executed.
  EXPECT_FALSE(p.run(call("cudaLaunchKernel", {{"func", 0x2}, {"stream", 0x40}}), "k").captured);
  p.run(call("cudaGraphInstantiate", {{"graph_exec", 0x77}, {"graph", 0x9}}));
  for (int i = 0; i < 3; ++i) {
    CallEvent inner = p.run(call("cuGraphLaunch", {{"graph_exec", 0x77}, {"stream", 0x30}}, true));
    ASSERT_TRUE(inner.graph);
    EXPECT_EQ(inner.graph->nodes, 3u);
    p.run(call("cudaGraphLaunch", {{"graph_exec", 0x77}, {"stream", 0x30}}));
  }
  EXPECT_EQ(p.graphs.counters().graph_launches, 3u);
  EXPECT_EQ(p.graphs.counters().captured_calls, 3u);
  EXPECT_EQ(p.work.total(GpuWork::kKernel), 3u + 1u);
  EXPECT_EQ(p.work.total(GpuWork::kMemset), 3u);
  EXPECT_EQ(p.work.total(GpuWork::kCopy), 3u);
  std::map<std::string, analysis::GpuWorkRow> rows;
  for (const auto& r : p.work.rows())
    rows[std::to_string(r.stream) + " " + std::string(analysis::gpu_work_kind_name(r.kind))] = r;
  EXPECT_EQ(rows["48 kernel"].count, 3u);
  EXPECT_EQ(rows["48 kernel"].graph, 3u);
  EXPECT_EQ(rows["48 kernel"].name, "k");
  EXPECT_EQ(rows["48 memset"].bytes, 3u * 256);
  EXPECT_EQ(rows["48 copy"].direction, "HtoD");
  EXPECT_EQ(rows["48 copy"].bytes, 3u * 64);
  EXPECT_EQ(rows["64 kernel"].count, 1u);
  EXPECT_EQ(rows["64 kernel"].graph, 0u);
  EXPECT_FALSE(rows.contains("32 kernel"));

  // Destroyed: later launches of that handle are unknown, not counted.
  p.run(call("cudaGraphExecDestroy", {{"graph_exec", 0x77}}));
  EXPECT_FALSE(p.run(call("cudaGraphLaunch", {{"graph_exec", 0x77}, {"stream", 0x30}})).graph);
  EXPECT_EQ(p.graphs.counters().graph_launches_unknown, 1u);
  EXPECT_EQ(p.work.total(GpuWork::kKernel), 4u);
  // The work table says so (the nested driver launch is the same one).
  p.run(call("cuGraphLaunch", {{"graph_exec", 0x77}, {"stream", 0x30}}, true));
  EXPECT_EQ(p.work.unknown_graph_launches(), 1u);
}

TEST(GraphCapture, ExplicitNodesAreRecordedAndFailedCallsAreNot) {
  Pipeline p;
  EXPECT_TRUE(p.run(call("cudaGraphAddKernelNode", {{"graph", 0x5}, {"func", 0x2}}), "node_kernel").captured);
  p.run(call("cudaGraphAddMemsetNode", {{"graph", 0x5}, {"width", 16}, {"height", 2}, {"element_size", 4}}));
  CallEvent failed = call("cudaGraphAddMemcpyNode1D", {{"graph", 0x5}, {"count", 10}, {"kind", 2}});
  failed.ret = 1;
  p.run(failed);
  p.run(call("cuGraphInstantiateWithFlags", {{"graph_exec", 0x8}, {"graph", 0x5}}));
  CallEvent launch = p.run(call("cuGraphLaunch", {{"graph_exec", 0x8}, {"stream", 0x0}}));
  ASSERT_TRUE(launch.graph);
  EXPECT_EQ(launch.graph->nodes, 2u);
  EXPECT_EQ(p.work.total(GpuWork::kKernel), 1u);
  EXPECT_EQ(p.work.total(GpuWork::kMemset), 1u);
  EXPECT_EQ(p.work.total(GpuWork::kCopy), 0u);
  for (const auto& r : p.work.rows()) {
    if (r.kind == GpuWork::kMemset) {
      EXPECT_EQ(r.bytes, 16u * 2 * 4);
    }
  }
}

TEST(GpuWorkStats, DriverMemsetsAndCopiesCountOnceUnderTheirRuntimeCall) {
  analysis::GpuWorkStats work;
  auto add = [&](CallEvent e) { work.add(e); };
  add(call("cuMemsetD32Async", {{"count", 8}, {"stream", 0x10}}, true));
  add(call("cudaMemsetAsync", {{"count", 32}, {"stream", 0x10}}));
  add(call("cuMemsetD2D16Async", {{"width", 8}, {"height", 4}, {"stream", 0x10}}));
  add(call("cuMemcpyDtoHAsync_v2", {{"count", 100}, {"stream", 0x10}}, true));
  add(call("cudaMemcpyAsync", {{"count", 100}, {"kind", 2}, {"stream", 0x10}}));
  add(call("cuMemcpy3DAsync_v2",
           {{"width", 4}, {"height", 3}, {"depth", 2}, {"src_type", 2}, {"dst_type", 3}}));
  EXPECT_EQ(work.total(GpuWork::kMemset), 2u);
  EXPECT_EQ(work.total(GpuWork::kCopy), 2u);
  std::map<std::string, analysis::GpuWorkRow> rows;
  for (const auto& r : work.rows()) rows[r.direction.empty() ? "memset" : r.direction] = r;
  EXPECT_EQ(rows["memset"].bytes, 32u + 8 * 4 * 2);
  EXPECT_EQ(rows["DtoH"].bytes, 100u);
  EXPECT_EQ(rows["DtoA"].bytes, 24u);
}

}  // namespace
}  // namespace eacgm::ingest
