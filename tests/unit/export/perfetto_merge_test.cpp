// merge_perfetto_traces: two nodes' captures of the same pid and tids (as two nodes may
// have) become one trace whose processes and threads have ids of their own, named by
// node and rank, with each node's times moved by its clock offset; a node that did not
// answer is a named process with an instant saying why; a trace that is no capture is
// refused, naming its part.
#include "export/perfetto_merge.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "export/capture_trace.h"
#include "formatted_call.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

constexpr std::uint64_t kWall = 1'795'329'677'000'000'000ull;  // the windows' epoch offset

// A capture of pid 77 ("trainer") with an NCCL all-reduce on its main thread and a
// cuLaunchKernel on thread 78, starting at `start_ns` (monotonic), as the agent writes it.
std::string capture_of(std::uint64_t start_ns) {
  CapturedWindow w;
  w.pid = 77;
  w.comm = "trainer";
  w.wall_offset_ns = kWall;
  w.begin_ns = start_ns;
  w.armed_ns = start_ns + 100;
  w.disarming_ns = start_ns + 900'000;
  w.end_ns = start_ns + 901'000;
  CallEvent a = test::call_of("ncclAllReduce");
  a.pid = 77;
  a.tid = 77;
  a.ts_ns = kWall + start_ns + 5000;
  std::snprintf(a.comm.data(), a.comm.size(), "trainer");
  CallEvent k = test::call_of("cuLaunchKernel");
  k.pid = 77;
  k.tid = 78;
  k.ts_ns = kWall + start_ns + 7000;
  std::snprintf(k.comm.data(), k.comm.size(), "trainer");
  w.calls = {a, k};
  return capture_trace_json(w, {}, CaptureControl::Limits{});
}

// The events of `doc` whose name is `name` (any phase).
std::vector<json> named(const json& doc, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

std::map<std::uint64_t, std::string> process_names(const json& doc) {
  std::map<std::uint64_t, std::string> out;
  for (const auto& e : named(doc, "process_name"))
    out[e["pid"].get<std::uint64_t>()] = e["args"]["name"].get<std::string>();
  return out;
}

TEST(PerfettoMerge, TwoNodesOfOnePidBecomeTwoNamedProcessesOnOneClock) {
  // Node b's clock is 2 ms behind the store's: its times move 2 ms on.
  std::vector<TracePart> parts{
      {"node-b/rank 2", capture_of(10'000), 2'000'000, 2, json{{"node", "node-b"}, {"rank", 2}}},
      {"node-a/rank 0", capture_of(10'000), 0, 0, json{{"node", "node-a"}, {"rank", 0}}},
  };
  std::vector<MissingPart> missing{{"node-c/rank 4",
                                    "cannot reach the agent at http://node-c:9977: Connection", 4,
                                    json{{"node", "node-c"}}}};
  auto merged = merge_perfetto_traces(parts, missing, json{{"job", "81723"}});
  ASSERT_TRUE(merged) << merged.error();
  json doc;
  ASSERT_NO_THROW(doc = json::parse(*merged)) << *merged;

  const auto names = process_names(doc);
  ASSERT_EQ(names.size(), 3u) << doc.dump();
  std::set<std::string> labels;
  for (const auto& [pid, name] : names) labels.insert(name);
  EXPECT_EQ(labels,
            (std::set<std::string>{"node-a/rank 0: trainer (pid 77)", "node-b/rank 2: trainer (pid 77)",
                                   "node-c/rank 4: not captured"}));
  std::map<std::string, std::uint64_t> pid_of;
  for (const auto& [pid, name] : names) pid_of[name] = pid;
  const std::uint64_t a = pid_of["node-a/rank 0: trainer (pid 77)"];
  const std::uint64_t b = pid_of["node-b/rank 2: trainer (pid 77)"];
  EXPECT_NE(a, b);

  // Each node's all-reduce is on its own process; b's 2000 µs later on the common clock.
  std::map<std::uint64_t, double> allreduce_ts;
  std::set<std::pair<std::uint64_t, std::uint64_t>> threads;  // (pid, tid) of every call
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") threads.emplace(e["pid"].get<std::uint64_t>(), e["tid"].get<std::uint64_t>());
    if (e.value("name", "") == "ncclAllReduce")
      allreduce_ts[e["pid"].get<std::uint64_t>()] = e["ts"].get<double>();
  }
  ASSERT_EQ(allreduce_ts.size(), 2u) << doc.dump();
  EXPECT_DOUBLE_EQ(allreduce_ts[b] - allreduce_ts[a], 2000.0);
  EXPECT_DOUBLE_EQ(allreduce_ts[a], static_cast<double>(kWall + 15'000) / 1000.0);
  // Four threads, all apart; each main thread keeps its process's id.
  EXPECT_EQ(threads.size(), 4u);
  std::set<std::uint64_t> tids;
  for (const auto& [pid, tid] : threads) tids.insert(tid);
  EXPECT_EQ(tids.size(), 4u) << "a tid of one node never meets the other's";
  EXPECT_TRUE(threads.contains({a, a}));
  EXPECT_TRUE(threads.contains({b, b}));

  // Sorted by rank: node-a's rank 0 before node-b's rank 2 before node-c's rank 4.
  std::map<std::uint64_t, long> sort;
  for (const auto& e : named(doc, "process_sort_index"))
    sort[e["pid"].get<std::uint64_t>()] = e["args"]["sort_index"].get<long>();
  const std::uint64_t c = pid_of["node-c/rank 4: not captured"];
  EXPECT_LT(sort[a], sort[b]);
  EXPECT_LT(sort[b], sort[c]);

  // The missing node: an instant on its process saying why, at the window's start.
  bool said = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["pid"] == c && e["ph"] == "i") {
      said = e["name"].get<std::string>().find("not captured: cannot reach the agent") != std::string::npos;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), static_cast<double>(kWall + 10'000) / 1000.0);
    }
  }
  EXPECT_TRUE(said) << doc.dump();

  const json& about = doc["eacgm_job_capture"];
  EXPECT_EQ(about["job"], "81723");
  ASSERT_EQ(about["parts"].size(), 2u);
  EXPECT_EQ(about["parts"][0]["label"], "node-b/rank 2");
  EXPECT_EQ(about["parts"][0]["offset_ns"], 2'000'000);
  EXPECT_EQ(about["parts"][0]["capture"]["pid"], 77);
  ASSERT_EQ(about["missing"].size(), 1u);
  EXPECT_EQ(about["missing"][0]["node"], "node-c");
  EXPECT_NE(about["missing"][0]["reason"].get<std::string>().find("cannot reach"), std::string::npos);
}

TEST(PerfettoMerge, FlowIdsOfTwoPartsStayApart) {
  const std::string flow =
      R"({"traceEvents":[{"ph":"s","name":"launch","cat":"ac2g","id":1,"ts":1.0,"pid":5,"tid":5},)"
      R"({"ph":"f","bp":"e","name":"launch","cat":"ac2g","id":1,"ts":2.0,"pid":4194304,"tid":1}]})";
  auto merged = merge_perfetto_traces({{"n1/rank 0", flow, 0, 0, {}}, {"n2/rank 1", flow, 0, 1, {}}}, {}, {});
  ASSERT_TRUE(merged) << merged.error();
  const json doc = json::parse(*merged);
  std::map<std::string, std::set<std::uint64_t>> ids;  // phase → ids
  for (const auto& e : doc["traceEvents"]) {
    if (e.contains("id")) ids[e["ph"].get<std::string>()].insert(e["id"].get<std::uint64_t>());
  }
  EXPECT_EQ(ids["s"].size(), 2u);
  EXPECT_EQ(ids["s"], ids["f"]) << "each arrow's two ends keep one id";
  const auto names = process_names(doc);
  std::set<std::string> labels;
  for (const auto& [pid, name] : names) labels.insert(name);
  EXPECT_TRUE(labels.contains("n1/rank 0: pid 5")) << doc.dump();
  EXPECT_TRUE(labels.contains("n2/rank 1: GPUs")) << doc.dump();
}

TEST(PerfettoMerge, ATraceThatIsNoCaptureIsRefusedNamingItsPart) {
  const std::string good = capture_of(0);
  const struct {
    std::string trace, says;
  } bad[] = {
      {"<html>502 Bad Gateway</html>", "the trace of node-b/rank 1 is not a JSON object"},
      {R"({"events":[]})", "the trace of node-b/rank 1 has no traceEvents array"},
      {R"({"traceEvents":[{"ph":"X","ts":1}]})", "the trace of node-b/rank 1: event 1 has no pid"},
      {R"({"traceEvents":[{"ph":"X","pid":1,"tid":"main","ts":1}]})",
       "event 1 has a tid that is no whole number"},
      {R"({"traceEvents":[{"ph":"X","pid":1,"ts":"soon"}]})", "event 1 has a ts that is no number"},
      {R"({"traceEvents":[{"ph":"M","pid":1},7]})", "event 2 is not a JSON object"},
  };
  for (const auto& b : bad) {
    auto merged = merge_perfetto_traces(
        {{"node-a/rank 0", good, 0, 0, {}}, {"node-b/rank 1", b.trace, 0, 1, {}}}, {}, {});
    ASSERT_FALSE(merged) << b.trace;
    EXPECT_NE(merged.error().find(b.says), std::string::npos) << merged.error();
  }
}

// Given a list for them, a part that is no capture is left out and named instead: the
// other parts are merged and the refused one is a missing part with the reason.
TEST(PerfettoMerge, ARefusedPartIsNamedAsMissingWhenAListIsGiven) {
  std::vector<MissingPart> refused;
  auto merged = merge_perfetto_traces({{"node-a/rank 0", capture_of(0), 0, 0, json{{"node", "node-a"}}},
                                       {"node-b/rank 1", "<html>502</html>", 0, 1, json{{"node", "node-b"}}}},
                                      {}, {}, &refused);
  ASSERT_TRUE(merged) << merged.error();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].label, "node-b/rank 1");
  EXPECT_NE(refused[0].reason.find("the trace of node-b/rank 1 is not a JSON object"), std::string::npos)
      << refused[0].reason;
  const json doc = json::parse(*merged);
  std::set<std::string> labels;
  for (const auto& [pid, name] : process_names(doc)) labels.insert(name);
  EXPECT_EQ(labels,
            (std::set<std::string>{"node-a/rank 0: trainer (pid 77)", "node-b/rank 1: not captured"}));
  ASSERT_EQ(doc["eacgm_job_capture"]["parts"].size(), 1u);
  ASSERT_EQ(doc["eacgm_job_capture"]["missing"].size(), 1u);
  EXPECT_EQ(doc["eacgm_job_capture"]["missing"][0]["node"], "node-b");
}

}  // namespace
}  // namespace eacgm::exporting
