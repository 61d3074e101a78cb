// Integration tests (root, real eBPF uprobes on the machine's real libcudart): `eacgm
// trace --format perfetto` writes a document that strict JSON parsers read, with the
// test program's calls as complete events on its process and thread, named.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// The complete events by name, checked against the one traced process.
void expect_cuda_calls_timeline(const json& doc) {
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  const json& events = doc["traceEvents"];
  ASSERT_TRUE(events.is_array());
  std::map<std::string, int> calls;
  std::set<int> pids;
  std::map<int, std::string> process_names;
  std::map<int, std::string> thread_names;
  for (const auto& e : events) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names[e["tid"]] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    EXPECT_EQ(e["cat"], "cuda") << e.dump();
    calls[e["name"].get<std::string>()]++;
    pids.insert(e["pid"].get<int>());
    // Microseconds since the epoch: after 2020, and a call shorter than 5 s.
    EXPECT_GT(e["ts"].get<double>(), 1.6e15) << e.dump();
    EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    EXPECT_LT(e["dur"].get<double>(), 5e6) << e.dump();
    if (e["name"] == "cudaLaunchKernel") {
      EXPECT_EQ(e["args"]["args"]["grid"], json::array({2, 3, 4})) << e.dump();
      EXPECT_TRUE(e["args"]["ret"].is_number()) << e.dump();
    }
    if (e["name"] == "cudaMalloc") {
      EXPECT_TRUE(e["args"]["args"].contains("size")) << e.dump();
    }
  }
  EXPECT_EQ(calls["cudaMalloc"], 2);
  EXPECT_EQ(calls["cudaLaunchKernel"], 3);
  EXPECT_EQ(calls["cudaFree"], 2);
  ASSERT_EQ(pids.size(), 1u);
  const int pid = *pids.begin();
  EXPECT_EQ(process_names[pid], "cuda_calls");
  EXPECT_EQ(thread_names[pid], "cuda_calls");
}

TEST(TracePerfetto, WritesAValidTimelineToAFile) {
  const std::string out = temp_dir() + "/trace.json";
  Subprocess eacgm({bin("eacgm"), "trace", "--format", "perfetto", "-o", out, "--", bin("cuda_calls")});
  EXPECT_EQ(eacgm.wait(), 7) << "eacgm returns the command's exit code\n" << eacgm.err();
  const std::string text = read_file(out);
  json doc;
  ASSERT_NO_THROW(doc = json::parse(text)) << text.substr(0, 2000);
  expect_cuda_calls_timeline(doc);
  // Python's json module reads it too (what scripts over PyTorch traces use).
  if (std::filesystem::exists("/usr/bin/python3")) {
    Subprocess py({"/usr/bin/python3", "-c",
                   "import json,sys; d=json.load(open(sys.argv[1])); "
                   "print(sum(e['ph']=='X' and e['name']=='cudaMalloc' for e in d['traceEvents']))",
                   out});
    EXPECT_EQ(py.wait(), 0) << py.err();
    EXPECT_EQ(py.out(), "2\n") << py.err();
  }
}

TEST(TracePerfetto, WritesTheTimelineAloneOnStdout) {
  Subprocess eacgm({bin("eacgm"), "trace", "--format", "perfetto", "--", bin("cuda_calls")});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  // The command's own stdout went to stderr: stdout is one JSON document.
  json doc;
  ASSERT_NO_THROW(doc = json::parse(eacgm.out())) << eacgm.out().substr(0, 2000);
  expect_cuda_calls_timeline(doc);
}

}  // namespace
}  // namespace eacgm::test
