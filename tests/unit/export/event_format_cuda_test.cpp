// JSON output and summary of CUDA calls: 2D `bytes` (width * height), split launch
// dimensions, the kernel name ingest attaches, and the `nested` flag (in JSON only when
// set; in the summary a column of its own instead of `calls`).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "analysis/call_summary.h"
#include "builtin_probe.h"
#include "export/event_format.h"
#include "export/summary_table.h"
#include "probe/catalog.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

CallEvent call(const std::string& fn, std::initializer_list<std::pair<const char*, std::uint64_t>> values) {
  CallEvent e;
  e.probe = test::builtin_probe(fn);
  e.has_exit = true;
  e.dur_ns = 1000;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  for (const auto& [name, v] : values) {
    for (std::size_t i = 0; i < e.probe->spec.args.size(); ++i) {
      if (e.probe->spec.args[i].name == name) e.args[i] = v;
    }
  }
  return e;
}

json to_json(const CallEvent& e) {
  fmt::memory_buffer out;
  append_jsonl(out, e);
  return json::parse(std::string(out.data(), out.size()));
}

TEST(EventFormatCuda, Memcpy2DBytesAreWidthTimesHeight) {
  auto j = to_json(call("cudaMemcpy2D", {{"width", 300}, {"height", 7}}));
  EXPECT_EQ(j["args"]["bytes"], 2100);
  auto faulted = call("cudaMemcpy2D", {{"width", 300}, {"height", 7}});
  faulted.fault_mask = 1u << 5;  // height unreadable: no bytes rather than wrong ones
  EXPECT_FALSE(to_json(faulted)["args"].contains("bytes"));
}

TEST(EventFormatCuda, SplitDimensionsAndKernelName) {
  auto e = call("cuLaunchKernel", {{"f", 0xf00d}, {"grid", 2 | (3ull << 32)}, {"block", 64 | (2ull << 32)}});
  e.ext[1] = 4;
  e.ext[2] = 3;
  EXPECT_FALSE(to_json(e)["args"].contains("kernel")) << "unknown handles get no name";
  e.kernel = "probe_kernel(int*)";
  auto j = to_json(e);
  EXPECT_EQ(j["args"]["grid"], json::array({2, 3, 4}));
  EXPECT_EQ(j["args"]["block"], json::array({64, 2, 3}));
  EXPECT_EQ(j["args"]["kernel"], "probe_kernel(int*)");
}

TEST(EventFormatCuda, NestedOnlyWhenSet) {
  auto e = call("cuLaunchKernel", {{"f", 1}});
  EXPECT_FALSE(to_json(e).contains("nested"));
  e.nested = true;
  EXPECT_EQ(to_json(e)["nested"], true);
}

// Work recorded into a CUDA graph is marked as such (it did not run); a graph launch
// says what its graph holds, when its making was seen.
TEST(EventFormatCuda, CapturedWorkAndGraphLaunchesAreMarked) {
  auto launch = call("cudaLaunchKernel", {});
  EXPECT_FALSE(to_json(launch).contains("captured"));
  EXPECT_FALSE(to_json(launch).contains("graph"));
  launch.captured = true;
  EXPECT_EQ(to_json(launch)["captured"], true);
  fmt::memory_buffer text;
  append_text(text, launch);
  EXPECT_NE(fmt::to_string(text).find(" [captured]"), std::string::npos) << fmt::to_string(text);

  auto graph_launch = call("cudaGraphLaunch", {});
  EXPECT_FALSE(to_json(graph_launch).contains("graph"));  // its making was not seen
  auto work = std::make_shared<GraphWork>();
  work->items = {{GpuWork::kKernel, "a", "", 3, 0, 0},
                 {GpuWork::kKernel, "b", "", 2, 0, 0},
                 {GpuWork::kMemset, "", "", 1, 64, 0},
                 {GpuWork::kCopy, "", "HtoD", 4, 4096, 0}};
  work->nodes = 10;
  graph_launch.graph = work;
  const json j = to_json(graph_launch);
  EXPECT_EQ(j["graph"], json({{"nodes", 10}, {"kernels", 5}, {"memsets", 1}, {"copies", 4}}));
  EXPECT_FALSE(j.contains("captured"));
  text.clear();
  append_text(text, graph_launch);
  EXPECT_NE(fmt::to_string(text).find(" [graph: 5 kernels, 1 memsets, 4 copies]"), std::string::npos)
      << fmt::to_string(text);
}

TEST(CallSummaryNested, NestedCallsAreCountedApartFromCalls) {
  analysis::CallSummary s;
  auto launch = call("cudaLaunchKernel", {});
  auto driver = call("cuLaunchKernel", {});
  for (int i = 0; i < 3; ++i) s.add(launch);
  driver.nested = true;
  for (int i = 0; i < 3; ++i) s.add(driver);  // under the runtime's launches
  driver.nested = false;
  driver.dur_ns = 5000;
  s.add(driver);  // a direct driver launch (cuBLAS-style)
  std::uint64_t calls = 0;
  for (const auto& r : s.rows()) {
    calls += r.calls;
    if (r.function == "cuLaunchKernel") {
      EXPECT_EQ(r.calls, 1u);
      EXPECT_EQ(r.nested, 3u);
      EXPECT_EQ(r.total_ns, 5000u) << "nested time is inside the outer call's";
    }
  }
  EXPECT_EQ(calls, 4u) << "each launch counted once";
  const std::string table = render_table(s);
  EXPECT_NE(table.find("nested"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex("cuLaunchKernel +1 +3 +0 "))) << table;
}

TEST(CallSummaryNested, NoNestedColumnWithoutNestedCalls) {
  analysis::CallSummary s;
  s.add(call("cudaLaunchKernel", {}));
  EXPECT_EQ(render_table(s).find("nested"), std::string::npos);
}

}  // namespace
}  // namespace eacgm::exporting
