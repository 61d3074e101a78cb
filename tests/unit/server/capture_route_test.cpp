// The capture route's request parsing and the capture document (server/capture_route.h,
// export/capture_trace.h).
#include "server/capture_route.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "export/capture_trace.h"

namespace eacgm::server {
namespace {

using json = nlohmann::json;

Request post(std::string body, std::string type = "application/json") {
  Request r;
  r.method = "POST";
  r.path = "/api/v1/capture";
  r.headers.emplace_back("Content-Type", std::move(type));
  r.body = std::move(body);
  return r;
}

TEST(CaptureAsk, TakesAJsonBody) {
  auto ask = parse_capture_ask(post(R"({"pid":123,"seconds":5})"));
  ASSERT_TRUE(ask) << ask.error();
  EXPECT_EQ(ask->pid, 123u);
  EXPECT_DOUBLE_EQ(ask->seconds, 5);
  EXPECT_FALSE(ask->comm);
}

TEST(CaptureAsk, TakesSeveralPidsForOneWindow) {
  auto ask = parse_capture_ask(post(R"({"pids":[4242,4243],"seconds":2})"));
  ASSERT_TRUE(ask) << ask.error();
  EXPECT_EQ(ask->pids, (std::vector<std::uint32_t>{4242, 4243}));
  EXPECT_FALSE(ask->pid);
  EXPECT_DOUBLE_EQ(ask->seconds, 2);
}

TEST(CaptureAsk, TakesFormFieldsAndTheQueryString) {
  Request r = post("comm=python3&seconds=0.5", "application/x-www-form-urlencoded");
  auto ask = parse_capture_ask(r);
  ASSERT_TRUE(ask) << ask.error();
  EXPECT_EQ(ask->comm, "python3");
  EXPECT_DOUBLE_EQ(ask->seconds, 0.5);
  Request q = post("");
  q.params = {{"rank", "3"}, {"seconds", "60"}};
  auto by_rank = parse_capture_ask(q);
  ASSERT_TRUE(by_rank) << by_rank.error();
  EXPECT_EQ(by_rank->rank, 3);
}

TEST(CaptureAsk, RefusesWhatItCannotDo) {
  for (const auto& [body, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"pid":1,"seconds":60.5})", "seconds"},
           {R"({"pid":1,"seconds":0})", "seconds"},
           {R"({"pid":1,"seconds":"x"})", "seconds"},
           {R"({"pid":1})", "seconds: missing"},
           {R"({"seconds":1})", "nothing selects"},
           {R"({"pid":0,"seconds":1})", "pid"},
           {R"({"pid":-4,"seconds":1})", "pid"},
           {R"({"pid":1,"rank":0,"seconds":1})", "one of"},
           {R"({"comm":"a-name-longer-than-15","seconds":1})", "comm"},
           {R"([1,2])", "JSON object"},
           {R"({"pid":1,"seconds":1,"what":2})", "unknown field"},
           {R"({"pids":[],"seconds":1})", "pids: an array of 1 to 64"},
           {R"({"pids":7,"seconds":1})", "pids: an array of 1 to 64"},
           {R"({"pids":[7,"x"],"seconds":1})", "pids: each a process id"},
           {R"({"pids":[7,8,7],"seconds":1})", "pids: 7 is there twice"},
           {R"({"pids":[7],"pid":7,"seconds":1})", "one of"}}) {
    auto ask = parse_capture_ask(post(body));
    ASSERT_FALSE(ask) << body;
    EXPECT_NE(ask.error().find(says), std::string::npos) << body << ": " << ask.error();
  }
}

CallEvent call(std::uint64_t ts, std::uint64_t dur, std::uint32_t tid) {
  static const auto probe = [] {
    auto p = std::make_shared<ProbeInfo>();
    p->function = "cuLaunchKernel";
    p->spec.domain = "cuda_driver";
    return p;
  }();
  CallEvent e;
  e.probe = probe;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.has_exit = true;
  e.pid = 77;
  e.tid = tid;
  std::snprintf(e.comm.data(), e.comm.size(), "trainer");
  return e;
}

TEST(CaptureTrace, IsOneChromeTraceWithTheWindowAndTheTruncation) {
  CapturedWindow w;
  w.pid = 77;
  w.comm = "trainer";
  w.wall_offset_ns = 1'000'000'000'000;
  w.begin_ns = 1000;
  w.armed_ns = 2000;
  w.disarming_ns = 900'000;
  w.end_ns = 901'000;
  // Returns come inner first; the document orders them by start, outer first.
  w.calls = {call(w.wall_offset_ns + 5000, 100, 77), call(w.wall_offset_ns + 5000, 1000, 77),
             call(w.wall_offset_ns + 9000, 10, 78)};
  w.calls_left_out = 5;
  analysis::Anomaly in;
  in.pid = 77;
  in.ts_ns = w.wall_offset_ns + 6000;
  in.name = "cuStreamSynchronize";
  analysis::Anomaly other = in;
  other.pid = 78;
  const json doc = json::parse(exporting::capture_trace_json(w, {in, other}, CaptureControl::Limits{}));
  const json& c = doc["eacgm_capture"];
  EXPECT_EQ(c["pid"], 77);
  EXPECT_EQ(c["truncated"], true);
  EXPECT_EQ(c["calls_left_out"], 5);
  EXPECT_EQ(c["anomalies"], 1);
  int slices = 0, anomalies = 0, truncations = 0;
  double last_ts = 0, first_dur = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      if (slices == 0) first_dur = e["dur"].get<double>();
      EXPECT_GE(e["ts"].get<double>(), last_ts);
      last_ts = e["ts"].get<double>();
      ++slices;
    }
    if (e.value("cat", "") == "anomaly") ++anomalies;
    if (e.value("name", "").starts_with("capture truncated")) ++truncations;
  }
  EXPECT_EQ(slices, 3);
  EXPECT_DOUBLE_EQ(first_dur, 1.0);  // the outer call (1000 ns) first at the shared start
  EXPECT_EQ(anomalies, 1);
  EXPECT_EQ(truncations, 1);
}

}  // namespace
}  // namespace eacgm::server
