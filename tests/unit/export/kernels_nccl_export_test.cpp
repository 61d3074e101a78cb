// The JSON documents of /api/v1/kernels and /api/v1/nccl, the `bytes` of
// /api/v1/functions, and the eacgm_bytes_total / eacgm_kernel_launches_total families.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/live_analysis.h"
#include "export/api_json.h"
#include "export/call_metrics.h"

namespace eacgm::exporting {
namespace {

std::shared_ptr<const ProbeInfo> probe(const char* function, const char* domain, std::vector<ArgSpec> args,
                                       std::vector<DerivedArg> derived) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.name = function;
  p->spec.domain = domain;
  p->spec.ret = ReturnKind::kInt32;
  p->spec.args = std::move(args);
  p->spec.derived = std::move(derived);
  return p;
}

ArgSpec arg(const char* name, ArgKind kind = ArgKind::kRaw) {
  ArgSpec a;
  a.name = name;
  a.kind = kind;
  return a;
}

struct Fixture {
  std::shared_ptr<const ProbeInfo> launch = probe(
      "cudaLaunchKernel", "cuda", {arg("func"), arg("grid", ArgKind::kDim3), arg("block", ArgKind::kDim3)},
      {{"kernel", DerivedArg::Op::kKernelName, "func", ""}});
  std::shared_ptr<const ProbeInfo> memcpy =
      probe("cudaMemcpy", "cuda", {arg("dst"), arg("src"), arg("count")},
            {{"bytes", DerivedArg::Op::kCopy, "count", ""}});
  std::shared_ptr<const ProbeInfo> allreduce =
      probe("ncclAllReduce", "nccl", {arg("sendbuff"), arg("recvbuff"), arg("count"), arg("datatype")},
            {{"bytes", DerivedArg::Op::kTimesNcclDtype, "count", "datatype"}});

  CallEvent event(const std::shared_ptr<const ProbeInfo>& p, std::vector<std::uint64_t> args) {
    CallEvent e;
    e.probe = p;
    e.has_exit = true;
    e.dur_ns = 1000;
    e.nargs = static_cast<std::uint8_t>(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) e.args[i] = args[i];
    return e;
  }
  CallEvent kernel(const char* name, std::uint32_t gx) {
    CallEvent e = event(launch, {0x400000, gx | (std::uint64_t{3} << 32), 32 | (std::uint64_t{4} << 32)});
    e.ext[1] = 4;
    e.ext[2] = 1;
    e.kernel = name;
    return e;
  }

  analysis::AnalysisSnapshot snapshot() {
    analysis::LiveAnalysis live;
    std::vector<CallEvent> events;
    for (int i = 0; i < 3; ++i) events.push_back(kernel("probe_kernel(int*)", 2));
    events.push_back(kernel("probe_kernel(int*)", 5));
    events.push_back(kernel("small(float*)", 1));
    events.push_back(event(memcpy, {0x1000, 0x2000, 65536}));
    events.push_back(event(memcpy, {0x1000, 0x2000, 8192}));
    CallEvent nccl = event(allreduce, {0, 0, 1000, 7});
    nccl.nccl_comm_id = 0xabc;
    nccl.nccl_rank = 1;
    nccl.nccl_nranks = 8;
    events.push_back(nccl);
    live.on_calls(events);
    live.on_end(CounterValues{});
    return *live.snapshot();
  }
};

TEST(KernelsJson, ListsKernelsMostLaunchesFirstWithTheirShapesAndFoldsPastTheCap) {
  Fixture f;
  auto snap = f.snapshot();
  auto doc = json::parse(api_kernels(snap));
  EXPECT_TRUE(doc.contains("time_ns"));
  ASSERT_EQ(doc["kernels"].size(), 2u) << doc.dump();
  const auto& k = doc["kernels"][0];
  EXPECT_EQ(k["name"], "probe_kernel(int*)");
  EXPECT_EQ(k["launches"], 4);
  EXPECT_EQ(k["errors"], 0);
  ASSERT_EQ(k["shapes"].size(), 2u);
  EXPECT_EQ(k["shapes"][0], json::parse(R"({"grid":[2,3,4],"block":[32,4,1],"launches":3})"));
  EXPECT_EQ(k["shapes"][1]["grid"], json::parse("[5,3,4]"));
  EXPECT_EQ(k["folded_shapes"], 0);
  EXPECT_EQ(doc["folded"], 0);
  auto capped = json::parse(api_kernels(snap, 1));
  EXPECT_EQ(capped["kernels"].size(), 1u);
  EXPECT_EQ(capped["folded"], 1);
}

TEST(NcclJson, OneObjectPerCommunicatorAndFunction) {
  Fixture f;
  auto doc = json::parse(api_nccl(f.snapshot()));
  ASSERT_EQ(doc["collectives"].size(), 1u) << doc.dump();
  const auto& c = doc["collectives"][0];
  EXPECT_EQ(c["comm_id"], "0x0000000000000abc");
  EXPECT_EQ(c["function"], "ncclAllReduce");
  EXPECT_EQ(c["rank"], 1);
  EXPECT_EQ(c["nranks"], 8);
  EXPECT_EQ(c["calls"], 1);
  EXPECT_EQ(c["bytes"], 4000);
  EXPECT_EQ(c["max_ns"], 1000);
  EXPECT_TRUE(c["p50_ns"].is_number());
  EXPECT_EQ(doc["folded"], 0);
}

TEST(FunctionsJson, BytesForFunctionsThatHaveThemNullOtherwise) {
  Fixture f;
  auto doc = json::parse(api_functions(f.snapshot()));
  int seen = 0;
  for (const auto& r : doc["functions"]) {
    if (r["function"] == "cudaMemcpy") {
      EXPECT_EQ(r["bytes"], 73728);
      ++seen;
    }
    if (r["function"] == "cudaLaunchKernel") {
      EXPECT_TRUE(r["bytes"].is_null());
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2) << doc.dump();
}

TEST(CallMetrics, BytesAndKernelLaunchFamiliesFoldPastTheSeriesCap) {
  Fixture f;
  auto snap = f.snapshot();
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  CallMetricsOptions options;
  append_call_metrics(out, snap, options);
  const std::string text = out.finish();
  EXPECT_NE(text.find("eacgm_bytes_total{domain=\"cuda\",function=\"cudaMemcpy\"} 73728"), std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_bytes_total{domain=\"nccl\",function=\"ncclAllReduce\"} 4000"),
            std::string::npos);
  EXPECT_EQ(text.find("eacgm_bytes_total{domain=\"cuda\",function=\"cudaLaunchKernel\"}"), std::string::npos);
  EXPECT_NE(text.find("eacgm_kernel_launches_total{kernel=\"probe_kernel(int*)\"} 4"), std::string::npos);
  EXPECT_NE(text.find("eacgm_kernel_launches_total{kernel=\"small(float*)\"} 1"), std::string::npos);

  options.max_function_series = 1;
  ExpositionWriter capped(ExpositionFormat::kPrometheusText);
  append_call_metrics(capped, snap, options);
  const std::string folded = capped.finish();
  EXPECT_NE(folded.find("eacgm_kernel_launches_total{kernel=\"probe_kernel(int*)\"} 4"), std::string::npos)
      << folded;
  EXPECT_NE(folded.find("eacgm_kernel_launches_total{kernel=\"other\"} 1"), std::string::npos) << folded;
}

}  // namespace
}  // namespace eacgm::exporting
