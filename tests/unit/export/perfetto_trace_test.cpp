// PerfettoTrace: the JSON Trace Event Format as a strict parser reads it: complete and
// instant events with exact microsecond times, names once per process and thread,
// GPU counters, odd strings, and a valid file after the size limit or the end.
#include "export/perfetto_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formatted_call.h"
#include "output_file_test.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

CallEvent call(const std::string& fn, std::uint32_t pid, std::uint32_t tid, const std::string& comm) {
  CallEvent e = test::call_of(fn);
  e.pid = pid;
  e.tid = tid;
  e.ts_ns = 1795329677876339482ull;
  std::snprintf(e.comm.data(), e.comm.size(), "%s", comm.c_str());
  return e;
}

class PerfettoTraceTest : public test::OutputFileTest {
 protected:
  std::unique_ptr<PerfettoTrace> trace(std::uint64_t max_bytes = 0, PerfettoTrace::NameLimits limits = {}) {
    return std::make_unique<PerfettoTrace>(file_, max_bytes, record_limit(), limits);
  }

  // The whole file as a strict parser reads it (throws, failing the test, if invalid).
  json document() {
    const std::string text = written();
    json doc;
    EXPECT_NO_THROW(doc = json::parse(text)) << text;
    return doc;
  }

  std::vector<json> events(const std::string& ph, const std::string& name = "") {
    std::vector<json> out;
    const json doc = document();
    for (const auto& e : doc["traceEvents"]) {
      if (e["ph"] == ph && (name.empty() || e["name"] == name)) out.push_back(e);
    }
    return out;
  }
};

TEST_F(PerfettoTraceTest, EmptyTraceIsAValidDocument) {
  auto t = trace();
  t->on_end(CounterValues{});
  EXPECT_EQ(written(), "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n]}\n");
  const json doc = document();
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_TRUE(doc["traceEvents"].empty());
}

TEST_F(PerfettoTraceTest, CallWithDurationIsACompleteEventInExactMicroseconds) {
  CallEvent e = call("cudaMalloc", 9851, 9852, "cuda_calls");
  e.dur_ns = 1193;
  e.ret = 35;
  test::set_arg(e, "size", 1u << 20);
  std::vector<CallEvent> calls{e};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  // Printed in fixed point from the nanoseconds: nothing rounded.
  EXPECT_NE(written().find("\"ts\":1795329677876339.482,\"dur\":1.193,"), std::string::npos) << written();
  const auto x = events("X");
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]["name"], "cudaMalloc");
  EXPECT_EQ(x[0]["cat"], "cuda");
  EXPECT_EQ(x[0]["pid"], 9851);
  EXPECT_EQ(x[0]["tid"], 9852);
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 1.193);
  const json& a = x[0]["args"];
  EXPECT_EQ(a["ret"], 35);
  EXPECT_EQ(a["ret_name"], "cudaErrorInsufficientDriver");
  EXPECT_FALSE(a.contains("nested"));
  EXPECT_FALSE(a.contains("captured"));
  // The call's own arguments are the JSON Lines record's args object.
  EXPECT_EQ(a["args"], test::to_json(e)["args"]);
  EXPECT_EQ(a["args"]["size"], 1u << 20);
}

TEST_F(PerfettoTraceTest, SmallTimesKeepTheirLeadingZeros) {
  CallEvent e = call("cudaFree", 1, 1, "p");
  e.ts_ns = 5'000'007;
  e.dur_ns = 40;
  std::vector<CallEvent> calls{e};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  EXPECT_NE(written().find("\"ts\":5000.007,\"dur\":0.040,"), std::string::npos) << written();
}

TEST_F(PerfettoTraceTest, CallWithoutExitIsAnInstantOnItsThread) {
  CallEvent e = call("cuLaunchKernel", 700, 701, "python3");
  e.has_exit = false;
  e.dur_ns = 0;
  e.nested = true;
  e.captured = true;
  e.kernel = "probe_kernel(int*)";
  std::vector<CallEvent> calls{e};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  EXPECT_TRUE(events("X").empty());
  const auto i = events("i");
  ASSERT_EQ(i.size(), 1u);
  EXPECT_EQ(i[0]["s"], "t");
  EXPECT_EQ(i[0]["name"], "cuLaunchKernel");
  EXPECT_EQ(i[0]["cat"], "cuda_driver");
  EXPECT_FALSE(i[0].contains("dur"));
  EXPECT_EQ(i[0]["pid"], 700);
  EXPECT_EQ(i[0]["tid"], 701);
  const json& a = i[0]["args"];
  EXPECT_FALSE(a.contains("ret")) << "no return was seen";
  EXPECT_EQ(a["nested"], true);
  EXPECT_EQ(a["captured"], true);
  EXPECT_EQ(a["args"]["kernel"], "probe_kernel(int*)");
}

TEST_F(PerfettoTraceTest, NcclCommunicatorFieldsAreInTheArgs) {
  CallEvent e = call("ncclAllReduce", 3, 3, "nccl_calls");
  e.nccl_rank = 1;
  e.nccl_nranks = 4;
  e.nccl_comm_id = 0xabc;
  std::vector<CallEvent> calls{e};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  const auto x = events("X", "ncclAllReduce");
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]["cat"], "nccl");
  EXPECT_EQ(x[0]["args"]["args"]["rank"], 1);
  EXPECT_EQ(x[0]["args"]["args"]["nranks"], 4);
  EXPECT_EQ(x[0]["args"]["args"]["comm_id"], "0x0000000000000abc");
}

TEST_F(PerfettoTraceTest, NamesEachProcessAndThreadOnceBeforeItsFirstCall) {
  std::vector<CallEvent> calls{call("cudaMalloc", 10, 10, "train"), call("cudaFree", 10, 10, "train"),
                               call("cudaMalloc", 10, 11, "worker"), call("cudaFree", 10, 10, "train"),
                               call("cudaMalloc", 20, 20, "other")};
  auto t = trace();
  t->on_calls(calls);
  t->on_calls(calls);
  t->on_end(CounterValues{});
  std::map<int, std::string> process_names;
  std::map<int, std::string> thread_names;
  for (const auto& m : events("M", "process_name")) {
    EXPECT_TRUE(process_names.emplace(m["pid"].get<int>(), m["args"]["name"]).second) << m.dump();
  }
  for (const auto& m : events("M", "thread_name")) {
    EXPECT_TRUE(thread_names.emplace(m["tid"].get<int>(), m["args"]["name"]).second) << m.dump();
  }
  EXPECT_EQ(process_names, (std::map<int, std::string>{{10, "train"}, {20, "other"}}));
  EXPECT_EQ(thread_names, (std::map<int, std::string>{{10, "train"}, {11, "worker"}, {20, "other"}}));
  // Metadata precedes the thread's first call in the file.
  const json doc = document();
  const auto& ev = doc["traceEvents"];
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev[0]["name"], "process_name");
  EXPECT_EQ(ev[1]["name"], "thread_name");
  EXPECT_EQ(ev[2]["ph"], "X");
  EXPECT_EQ(events("X").size(), 10u);
  EXPECT_EQ(t->calls_unnamed(), 0u);
}

TEST_F(PerfettoTraceTest, AProcessFirstSeenFromAnotherThreadTakesItsMainThreadsName) {
  std::vector<CallEvent> calls{call("cudaMalloc", 10, 12, "pt_worker"), call("cudaMalloc", 10, 10, "python3"),
                               call("cudaMalloc", 10, 13, "pt_worker2")};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  const auto names = events("M", "process_name");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0]["args"]["name"], "pt_worker");
  EXPECT_EQ(names[1]["args"]["name"], "python3") << "named again by its main thread";
}

TEST_F(PerfettoTraceTest, NamesStopAtTheirLimitsAndTheCallsAreStillWritten) {
  std::vector<CallEvent> calls{call("cudaMalloc", 1, 1, "a"), call("cudaMalloc", 1, 2, "a2"),
                               call("cudaMalloc", 1, 3, "a3"), call("cudaFree", 1, 3, "a3"),
                               call("cudaMalloc", 2, 2, "b")};
  auto t = trace(0, PerfettoTrace::NameLimits{.processes = 1, .threads = 2});
  t->on_calls(calls);
  t->on_end(CounterValues{});
  EXPECT_EQ(events("M", "process_name").size(), 1u);
  EXPECT_EQ(events("M", "thread_name").size(), 2u);
  EXPECT_EQ(events("X").size(), 5u);
  EXPECT_EQ(t->calls_unnamed(), 3u) << "tid 3 twice, pid 2 once";
}

TEST_F(PerfettoTraceTest, GpuSamplesAreCountersOnTheGpuProcessAndOnTheirProcesses) {
  GpuSnapshot s;
  s.time = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1795345795159562834ll));
  DeviceSample d0;
  d0.index = 0;
  d0.utilization_gpu_percent = 99;
  d0.memory_used_bytes = 11370758144ull;
  d0.power_usage_milliwatts = 652300;
  DeviceSample lost;
  lost.index = 1;
  lost.lost = true;
  lost.error = "GPU is lost";
  s.devices = {d0, lost};
  ProcessSample p;
  p.pid = 4121;
  p.gpu_index = 0;
  p.name = "python";
  p.used_memory_bytes = 10766778368ull;
  p.sm_utilization_percent = 97;
  s.processes = {p};
  auto t = trace();
  t->on_gpu(s);
  s.time += std::chrono::seconds(1);
  t->on_gpu(s);
  t->on_end(CounterValues{});
  EXPECT_NE(written().find("\"ts\":1795345795159562.834,"), std::string::npos) << written();
  const auto gpu_names = events("M", "process_name");
  ASSERT_EQ(gpu_names.size(), 2u) << "the GPUs once, the sampled process once";
  EXPECT_EQ(gpu_names[0]["pid"], PerfettoTrace::kGpuPid);
  EXPECT_EQ(gpu_names[0]["args"]["name"], "GPUs");
  EXPECT_EQ(gpu_names[1]["pid"], 4121);
  EXPECT_EQ(gpu_names[1]["args"]["name"], "python");
  const auto c = events("C");
  ASSERT_EQ(c.size(), 4u) << "GPU 0 and the process, twice; the lost GPU has no values";
  EXPECT_EQ(c[0]["name"], "GPU 0");
  EXPECT_EQ(c[0]["pid"], PerfettoTrace::kGpuPid);
  EXPECT_EQ(c[0]["args"], (json{{"util_pct", 99}, {"mem_used_bytes", 11370758144ull}, {"power_mw", 652300}}));
  EXPECT_EQ(c[1]["name"], "GPU 0");
  EXPECT_EQ(c[1]["pid"], 4121);
  EXPECT_EQ(c[1]["args"], (json{{"mem_used_bytes", 10766778368ull}, {"sm_util_pct", 97}}));
}

TEST_F(PerfettoTraceTest, OddStringsStayValidJson) {
  // Quotes, a backslash, a control character and a byte that is not UTF-8 in a thread
  // name; the same in a kernel name.
  CallEvent e = call("cudaLaunchKernel", 5, 5, "a\"b\\c\x01\xff");
  e.kernel = "k<\"x\">\\\n\xc3(\xe2\x82\xac)";
  std::vector<CallEvent> calls{e};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  const std::string r = "\xef\xbf\xbd";
  const auto names = events("M", "thread_name");
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0]["args"]["name"], "a\"b\\c\x01" + r);
  const auto x = events("X");
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]["args"]["args"]["kernel"], "k<\"x\">\\\n" + r + "(\xe2\x82\xac)");
}

TEST_F(PerfettoTraceTest, SizeLimitCutsBetweenEventsAndTheEndStillCloses) {
  std::vector<CallEvent> calls(200, call("cudaMalloc", 7, 7, "cuda_calls"));
  const std::uint64_t limit = 4096;
  auto t = trace(limit);
  t->on_calls(calls);
  t->flush();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  const std::string text = written();
  EXPECT_LE(text.size(), limit);
  EXPECT_GT(text.size(), limit - 600) << "filled up to about one event of the limit";
  const json doc = document();
  const std::size_t kept = doc["traceEvents"].size();
  EXPECT_GT(kept, 5u);
  EXPECT_EQ(kept + t->output().lines_not_written(), 2u + 400u)
      << "names, calls: each either written or counted";
  EXPECT_EQ(limits_, std::vector<std::uint64_t>{limit}) << "the limit is said once";
  EXPECT_EQ(t->output().write_errors(), 0u);
}

TEST_F(PerfettoTraceTest, EveryFlushEndsBetweenEventsSoAKilledTraceCloses) {
  std::vector<CallEvent> calls{call("cudaMalloc", 7, 7, "x"), call("cudaFree", 7, 7, "x")};
  auto t = trace();
  t->on_calls(calls);
  t->flush();
  // What a viewer sees of a trace whose eacgm was killed here, closed as it would be.
  const std::string text = written();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_TRUE(json::accept(text + "]}")) << text;
  t->on_calls(calls);
  t->on_end(CounterValues{});
  t->on_end(CounterValues{});
  const std::string done = written();
  EXPECT_EQ(done.size() - done.rfind("]}"), 3u) << "closed once, at the very end";
  EXPECT_EQ(events("X").size(), 4u);
}

TEST_F(PerfettoTraceTest, FailedWritesAreCounted) {
  std::fclose(file_);
  file_ = std::fopen("/dev/full", "w");
  ASSERT_NE(file_, nullptr);
  std::vector<CallEvent> calls{call("cudaMalloc", 7, 7, "x")};
  auto t = trace();
  t->on_calls(calls);
  t->on_end(CounterValues{});
  EXPECT_GT(t->output().write_errors(), 0u);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace
}  // namespace eacgm::exporting
