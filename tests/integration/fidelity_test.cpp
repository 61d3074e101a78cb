// Integration tests (root, real eBPF uprobes): GPU work counted once per process, stream
// and name (memsets and copies with bytes, whichever layer issued them), CUDA graphs
// (captured work recorded, each launch counting its graph), a 200-byte kernel name read
// whole, and static CUDA runtimes (nvcc's default; a shared library carrying its own),
// found by their symbols and named after the process exited. The driver is the tests'
// FAKE libcuda (tests/fakes/fake_libcuda), whose calls succeed; the static runtimes'
// calls fail without a GPU and are traced all the same.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "events.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

std::string fake_libcuda() { return bin("fake_libcuda/libcuda.so.1"); }

std::string long_name_of(const std::string& program_out) {
  std::smatch m;
  std::regex re(R"(long_name=(\w+))");
  return std::regex_search(program_out, m, re) ? m[1].str() : std::string();
}

// The gpu_work rows as "kind stream name-or-direction" -> row.
std::map<std::string, json> work_rows(const json& doc) {
  std::map<std::string, json> rows;
  for (const auto& r : doc["gpu_work"]["rows"]) {
    std::string what = r.contains("name")        ? r["name"].get<std::string>()
                       : r.contains("direction") ? r["direction"].get<std::string>()
                                                 : "";
    rows[r["kind"].get<std::string>() + " " + r["stream"].get<std::string>() + " " + what] = r;
  }
  return rows;
}

TEST(Fidelity, TwoHundredByteKernelNameInAFreedBufferIsReadWhole) {
  std::string dir = temp_dir();
  std::string out = dir + "/events.jsonl";
  std::string hold = dir + "/hold";
  Subprocess eacgm({bin("eacgm"), "trace", "--probes", "cuda_driver", "-o", out, "--", bin("graph_calls"),
                    fake_libcuda(), "--hold-file", hold});
  ASSERT_TRUE(eacgm.wait_for("holding"));
  // Released once the last launch is written: every name was read while it lived.
  for (int i = 0; i < 4000 && read_file(out).find("cuGraphDestroy") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::ofstream(hold).put('1');
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const std::string name = long_name_of(eacgm.out());
  ASSERT_EQ(name.size(), 200u) << eacgm.out();
  int lookups = 0, long_launches = 0;
  for (const auto& e : read_jsonl(out)) {
    if (e["name"] == "cuModuleGetFunction" && e["args"]["name"] != "short_kernel") {
      ++lookups;
      EXPECT_EQ(e["args"]["name"], name) << e.dump();
      EXPECT_FALSE(e["args"].contains("name_rest")) << "joined into name: " << e.dump();
    }
    if (e["name"] == "cuLaunchKernel" && e["args"].contains("kernel") &&
        e["args"]["kernel"] != "short_kernel") {
      ++long_launches;
      EXPECT_EQ(e["args"]["kernel"], name);
    }
  }
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(long_launches, 4) << "3 launched, 1 captured";
}

// `eacgm run --json` of graph_calls in `mode` ("" for the default); its long kernel name.
std::pair<json, std::string> run_graph_calls(const std::string& mode) {
  std::vector<std::string> argv{bin("eacgm"), "run", "--json", "--no-gpu", "--probes", "cuda_driver"};
  if (!mode.empty()) argv.insert(argv.end(), {"--mode", mode});
  argv.insert(argv.end(), {"--", bin("graph_calls"), fake_libcuda()});
  Subprocess eacgm(argv);
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  return {json::parse(eacgm.out()), long_name_of(eacgm.err())};
}

// What graph_calls issued, counted as executed: the direct work, and each of the 10
// replays' nodes at the replay's stream; the work captured on stream 0x2000 not at all.
void expect_graph_calls_work(const json& doc, const std::string& name) {
  ASSERT_EQ(name.size(), 200u);
  const json& work = doc["gpu_work"];
  // 3 direct launches + 10 replays x (2 short + 1 long); the 3 captured are not executed.
  EXPECT_EQ(work["kernels"], 33) << work.dump(1);
  EXPECT_EQ(work["memsets"], 3 + 10) << work.dump(1);
  EXPECT_EQ(work["copies"], 2 + 10) << work.dump(1);
  auto rows = work_rows(doc);
  // The long name may be read past its first 190 bytes only while the process lives.
  std::string long_key;
  for (const auto& [key, row] : rows) {
    if (key.starts_with("kernel 0x1000 ") &&
        name.starts_with(row["name"].get<std::string>().substr(0, 190))) {
      long_key = key;
    }
  }
  ASSERT_FALSE(long_key.empty()) << work.dump(1);
  EXPECT_EQ(rows[long_key]["count"], 3);
  EXPECT_EQ(rows[long_key]["graph"], 0);
  EXPECT_EQ(rows["kernel 0x3000 short_kernel"]["count"], 20) << work.dump(1);
  EXPECT_EQ(rows["kernel 0x3000 short_kernel"]["graph"], 20);
  int graph_long = 0;
  for (const auto& [key, row] : rows) {
    if (key.starts_with("kernel 0x3000 ") && key != "kernel 0x3000 short_kernel")
      graph_long += row["count"].get<int>();
  }
  EXPECT_EQ(graph_long, 10);
  EXPECT_EQ(rows["memset 0x1000 "]["count"], 2);  // D32 (1024 bytes) and D2D16 (8 x 4 x 2)
  EXPECT_EQ(rows["memset 0x1000 "]["bytes"], 1024 + 64);
  EXPECT_EQ(rows["memset 0x0 "]["bytes"], 100);
  EXPECT_EQ(rows["memset 0x3000 "]["count"], 10);
  EXPECT_EQ(rows["memset 0x3000 "]["bytes"], 2560);
  EXPECT_EQ(rows["copy 0x1000 HtoD"]["bytes"], 4096);
  EXPECT_EQ(rows["copy 0x0 DtoH"]["bytes"], 512);
  EXPECT_EQ(rows["copy 0x3000 HtoD"]["count"], 10);
  EXPECT_EQ(rows["copy 0x3000 HtoD"]["bytes"], 1280);
  EXPECT_TRUE(rows.find("kernel 0x2000 short_kernel") == rows.end()) << "captured, not executed";
  EXPECT_EQ(doc["accounting"]["graph_launches"], 10);
  EXPECT_EQ(doc["accounting"]["graph_launches_unknown"], 0);
  EXPECT_EQ(doc["accounting"]["captured_calls"], 5);
}

std::map<std::string, json> by_function(const json& doc) {
  std::map<std::string, json> out;
  for (const auto& f : doc["functions"]) out[f["function"].get<std::string>()] = f;
  return out;
}

TEST(Fidelity, GraphReplaysCountTheirKernelsMemsetsAndCopiesAndCapturedWorkIsNotExecuted) {
  auto [doc, name] = run_graph_calls("per-call");
  expect_graph_calls_work(doc, name);
}

// The default mode counts launches in the kernel, but while the process has a stream
// capture open (from the begin's entry to the end's return) its launches, memsets and
// copies come call by call, so the graph's contents are known as in per-call mode; the
// calls outside the capture are still counted, not recorded.
TEST(Fidelity, DefaultModeRecordsWorkMadeDuringACaptureAndCountsTheRest) {
  auto [doc, name] = run_graph_calls("");
  expect_graph_calls_work(doc, name);
  // Row for row as in per-call mode (another process: its pid aside; counted rows carry
  // no command name; the long name compared on the bytes read for sure).
  auto per_call = run_graph_calls("per-call").first;
  const auto without_pid = [](const json& d) {
    json rows = d["gpu_work"]["rows"];
    for (auto& r : rows) {
      r.erase("pid");
      r.erase("comm");
      if (r.contains("name")) r["name"] = r["name"].get<std::string>().substr(0, 190);
    }
    return rows;
  };
  EXPECT_EQ(without_pid(doc), without_pid(per_call));
  auto f = by_function(doc);
  // calls, of them counted: 3 launches counted and 3 recorded during the capture, and so on.
  const std::map<std::string, std::pair<int, int>> expected{
      {"cuLaunchKernel", {6, 3}},          {"cuMemsetD32Async", {2, 1}},   {"cuMemcpyHtoDAsync_v2", {2, 1}},
      {"cuMemsetD8_v2", {1, 1}},           {"cuMemsetD2D16Async", {1, 1}}, {"cuMemcpyDtoH_v2", {1, 1}},
      {"cuStreamBeginCapture_v2", {1, 0}}, {"cuGraphLaunch", {10, 0}}};
  for (const auto& [function, calls] : expected) {
    ASSERT_TRUE(f.contains(function)) << doc["functions"].dump(1);
    EXPECT_EQ(f[function]["calls"], calls.first) << function;
    EXPECT_EQ(f[function]["counted"], calls.second) << function;
  }
}

// The trace says which work was only recorded into a graph and what each replay runs:
// graph_calls captures 3 launches, a memset and a copy on stream 0x2000, then replays the
// graph 10 times on stream 0x3000.
TEST(Fidelity, TraceMarksCapturedWorkAndSaysWhatEachGraphLaunchRuns) {
  std::string out = temp_dir() + "/events.jsonl";
  Subprocess eacgm({bin("eacgm"), "trace", "--probes", "cuda_driver", "-o", out, "--", bin("graph_calls"),
                    fake_libcuda()});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  int captured = 0, captured_off_stream = 0, launches = 0;
  for (const auto& e : read_jsonl(out)) {
    if (e.contains("captured")) {
      EXPECT_EQ(e["captured"], true) << e.dump();
      ++captured;
      if (e["args"].contains("stream") && e["args"]["stream"] != "0x2000") ++captured_off_stream;
    }
    if (e["name"] == "cuGraphLaunch") {
      ++launches;
      EXPECT_EQ(e["graph"], json({{"nodes", 5}, {"kernels", 3}, {"memsets", 1}, {"copies", 1}})) << e.dump();
    }
  }
  EXPECT_EQ(captured, 5);
  EXPECT_EQ(captured_off_stream, 0);
  EXPECT_EQ(launches, 10);
}

TEST(Fidelity, NvccDefaultStaticRuntimeProgramExitingRightAfterItsLaunchesIsFullyNamed) {
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--mode", "per-call", "--probes", "cuda", "--",
                    bin("static_runtime")});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  json doc = json::parse(eacgm.out());
  std::map<std::string, std::uint64_t> calls;
  for (const auto& f : doc["functions"])
    calls[f["function"].get<std::string>()] = f["calls"].get<std::uint64_t>();
  EXPECT_EQ(calls["cudaLaunchKernel"], 2u) << doc["functions"].dump(1) << eacgm.err();
  EXPECT_GE(calls["__cudaRegisterFunction"], 1u);
  const std::string kernel =
      "void fidelity_static_runtime_test::kernel_with_a_rather_long_name_for_testing<float, 4>(float*, int)";
  json found;
  for (const auto& r : doc["gpu_work"]["rows"]) {
    if (r["kind"] == "kernel") found = r;
  }
  ASSERT_FALSE(found.is_null()) << doc["gpu_work"].dump(1);
  EXPECT_EQ(found["name"], kernel);
  EXPECT_EQ(found["count"], 2);
}

TEST(Fidelity, SharedLibraryWithItsOwnStaticRuntimeCountsMemsetsAndCopiesOnceWithBytes) {
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--mode", "per-call", "--probes",
                    "cuda,cuda_driver", "--", bin("static_rt_user"), bin("libeacgm_static_rt.so"),
                    fake_libcuda()});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  json doc = json::parse(eacgm.out());
  const json& work = doc["gpu_work"];
  auto rows = work_rows(doc);
  // Runtime (in the library) and driver layers: one row each, every operation once.
  EXPECT_EQ(work["memsets"], 2) << work.dump(1);
  EXPECT_EQ(work["copies"], 2) << work.dump(1);
  EXPECT_EQ(rows["memset 0x1000 "]["bytes"], 1000 + 200);
  EXPECT_EQ(rows["copy 0x1000 HtoD"]["bytes"], 700 + 300);
  EXPECT_EQ(work["kernels"], 1);
  std::uint64_t nested = 0;
  for (const auto& f : doc["functions"]) nested += f["nested"].get<std::uint64_t>();
  std::map<std::string, std::string> domain;
  for (const auto& f : doc["functions"])
    domain[f["function"].get<std::string>()] = f["domain"].get<std::string>();
  EXPECT_EQ(domain["cudaMemsetAsync"], "cuda") << "runtime probes attach inside the library";
  EXPECT_EQ(domain["cuMemsetD32Async"], "cuda_driver");
  EXPECT_EQ(nested, 0u) << "no driver call ran inside these runtime calls here";
}

}  // namespace
}  // namespace eacgm::test
