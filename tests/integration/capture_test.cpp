// On-demand capture end to end (POST /api/v1/capture on `eacgm serve`, real eBPF): a
// program that logs each of its driver calls is captured for 2 s while another one runs
// beside it. The timeline holds only the captured process's calls, inside the window and
// nested per thread, as many as it logged there (boundary calls aside, defined below);
// the other process is absent; a second capture of the same process meanwhile is 409;
// and the always-on counts of the whole run equal the program's calls (nothing counted
// twice, nothing lost across the window).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
namespace http = server::testing;

// A POST of `body` (JSON) to `path`, read to the end (a capture answers after its window).
http::Reply post(std::uint16_t port, const std::string& path, const std::string& body,
                 const std::string& extra_headers = "",
                 const std::string& content_type = "application/json") {
  const int fd = http::connect_to(port);
  if (fd < 0) return {};
  http::send_all(fd, "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                         "\r\nConnection: close\r\nContent-Type: " + content_type + "\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body);
  const std::string got = http::read_until(
      fd, [](const std::string&) { return false; }, 90s);
  ::close(fd);
  return http::parse_reply(got);
}

struct LoggedCall {
  std::string function;
  std::uint64_t before = 0, after = 0;
};

std::vector<LoggedCall> read_log(const std::string& path) {
  std::vector<LoggedCall> out;
  std::ifstream in(path);
  LoggedCall c;
  while (in >> c.function >> c.before >> c.after) out.push_back(c);
  return out;
}

// The always-on total of `pid` in /api/v1/processes (0 when absent).
std::uint64_t process_calls(std::uint16_t port, std::uint32_t pid) {
  const json doc = json::parse(http::get(port, "/api/v1/processes").body, nullptr, false);
  if (doc.is_discarded()) return 0;
  for (const auto& p : doc["processes"]) {
    if (p["pid"] == pid) return p["calls"].get<std::uint64_t>();
  }
  return 0;
}

class Capture : public ServeFixture {};

TEST_F(Capture, TimelineHoldsTheProcessCallsOfTheWindowAndCountsStayExact) {
  // Counts are exact with the duty cycle off (with it, cycled probes' counts are estimates).
  auto serve = start_serve({"--probes", "cuda_driver", "--config", config("[trace]\nduty_cycle = false\n")},
                           "always-on");
  const std::string go = dir_ + "/go";
  const std::string log_a = dir_ + "/a.log", log_b = dir_ + "/b.log";
  Subprocess a({bin("capture_calls"), "--seconds", "6", "--log", log_a, "--wait-file", go});
  Subprocess b({bin("capture_calls"), "--seconds", "6", "--log", log_b, "--wait-file", go});
  ASSERT_TRUE(a.wait_for("ready", false)) << a.err();
  ASSERT_TRUE(b.wait_for("ready", false)) << b.err();
  ASSERT_TRUE(serve->wait_for("libcuda.so", true)) << serve->err();
  std::ofstream(go) << "go";
  std::this_thread::sleep_for(1500ms);

  const auto pid = static_cast<std::uint32_t>(a.pid());
  auto first = std::async(std::launch::async, [&] {
    return post(port_, "/api/v1/capture", "{\"pid\":" + std::to_string(pid) + ",\"seconds\":2}");
  });
  std::this_thread::sleep_for(500ms);
  const auto second = post(port_, "/api/v1/capture", "{\"pid\":" + std::to_string(pid) + ",\"seconds\":1}");
  EXPECT_EQ(second.status, 409) << second.body;
  const auto reply = first.get();
  ASSERT_EQ(reply.status, 200) << reply.head << reply.body.substr(0, 400) << serve->err();
  EXPECT_NE(reply.header("Content-Type").find("application/json"), std::string::npos) << reply.head;
  ASSERT_EQ(a.wait(), 0) << a.err();
  ASSERT_EQ(b.wait(), 0) << b.err();

  const json doc = json::parse(reply.body, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << reply.body.substr(0, 400);
  const json& cap = doc["eacgm_capture"];
  ASSERT_EQ(cap["pid"], pid) << cap.dump();
  EXPECT_EQ(cap["truncated"], false) << cap.dump();
  EXPECT_EQ(cap["drained"], true) << cap.dump();
  const auto begin = cap["begin_ns"].get<std::uint64_t>(), armed = cap["armed_ns"].get<std::uint64_t>();
  const auto disarming = cap["disarming_ns"].get<std::uint64_t>(), end = cap["end_ns"].get<std::uint64_t>();
  const auto offset = cap["wall_offset_ns"].get<std::uint64_t>();
  ASSERT_TRUE(begin <= armed && armed < disarming && disarming <= end) << cap.dump();
  EXPECT_NEAR(static_cast<double>(disarming - armed) / 1e9, 2.0, 0.3) << cap.dump();

  // The calls in the timeline: all the captured process's, none of the other's, each
  // started inside the window (1 ms for the conversion between clocks), nested per thread.
  std::map<std::string, std::uint64_t> captured;
  std::map<std::uint32_t, std::vector<std::pair<double, double>>> slices;  // tid → (ts, end) in µs
  bool process_named = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == pid) process_named = true;
    if (!e.contains("cat") || (e["cat"] != "cuda_driver" && e["cat"] != "cuda")) continue;
    ASSERT_EQ(e["pid"], pid) << e.dump();
    EXPECT_NE(e["pid"], static_cast<std::uint32_t>(b.pid())) << e.dump();
    ASSERT_EQ(e["ph"], "X") << e.dump();
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    const double start_ns = ts * 1000 - static_cast<double>(offset);
    EXPECT_GE(start_ns, static_cast<double>(begin) - 1e6) << e.dump();
    EXPECT_LE(start_ns, static_cast<double>(end) + 1e6) << e.dump();
    EXPECT_TRUE(e["args"].contains("args")) << e.dump();
    captured[e["name"].get<std::string>()]++;
    slices[e["tid"].get<std::uint32_t>()].emplace_back(ts, ts + dur);
  }
  EXPECT_TRUE(process_named);
  for (auto& [tid, list] : slices) {
    std::sort(list.begin(), list.end());
    std::vector<double> open;  // ends of the enclosing slices
    for (const auto& [s, e] : list) {
      while (!open.empty() && open.back() <= s) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(e, open.back()) << "slice [" << s << ", " << e << "] crosses its parent";
      }
      open.push_back(e);
    }
  }

  // Counts against the program's log. A call is inside when it began after the process
  // was armed and returned before it was disarmed: every one of those is in the timeline.
  // A call that returned before the arming began or began after the disarming ended is
  // not. The ones straddling an edge may be either way.
  const auto logged = read_log(log_a);
  ASSERT_GT(logged.size(), 1000u);
  std::map<std::string, std::uint64_t> inside, may_be;
  for (const auto& c : logged) {
    if (c.before >= armed && c.after <= disarming) inside[c.function]++;
    if (c.after >= begin && c.before <= end) may_be[c.function]++;
  }
  for (const char* f : {"cuLaunchKernel", "cuStreamSynchronize"}) {
    EXPECT_GT(inside[f], 100u) << f;
    EXPECT_GE(captured[f], inside[f]) << f;
    EXPECT_LE(captured[f], may_be[f]) << f;
    EXPECT_LE(may_be[f] - inside[f], 4u) << f << ": only the calls at the two edges straddle them";
  }

  // The always-on counts of the whole run: every call once, counted or recorded.
  const auto logged_b = read_log(log_b);
  EXPECT_TRUE(eventually([&] { return process_calls(port_, pid) == logged.size(); }, 20s))
      << process_calls(port_, pid) << " != " << logged.size();
  EXPECT_TRUE(eventually(
      [&] { return process_calls(port_, static_cast<std::uint32_t>(b.pid())) == logged_b.size(); }, 20s))
      << process_calls(port_, static_cast<std::uint32_t>(b.pid())) << " != " << logged_b.size();
}

TEST_F(Capture, BadRequestsAreRefusedWithOneLine) {
  auto serve = start_serve({"--probes", "cuda_driver"}, "always-on");
  const auto expect_400 = [&](const std::string& body, const std::string& says) {
    const auto r = post(port_, "/api/v1/capture", body);
    EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
    const json doc = json::parse(r.body, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << r.body;
    EXPECT_NE(doc["error"].get<std::string>().find(says), std::string::npos) << body << " -> " << r.body;
  };
  const std::string me = std::to_string(getpid());
  expect_400("{\"pid\":" + me + ",\"seconds\":61}", "seconds");
  expect_400("{\"pid\":" + me + ",\"seconds\":0}", "seconds");
  expect_400("{\"pid\":" + me + ",\"seconds\":-1}", "seconds");
  expect_400("{\"pid\":" + me + "}", "seconds");
  expect_400("{\"seconds\":1}", "nothing selects a process");
  expect_400("{\"pid\":4194304,\"seconds\":1}", "no such process");
  expect_400("{\"comm\":\"no-such-comm\",\"seconds\":1}", "no such process");
  expect_400("{\"pid\":" + me + ",\"comm\":\"x\",\"seconds\":1}", "one of");
  expect_400("not json", "JSON");
  expect_400("{\"pid\":" + me + ",\"seconds\":1,\"colour\":1}", "unknown field");
  // GET is not how a capture is asked for.
  const auto get = http::get(port_, "/api/v1/capture");
  EXPECT_EQ(get.status, 405) << get.body;
  EXPECT_EQ(get.header("Allow"), "POST") << get.head;
  // Form fields and the query string work too: a short capture of this test itself.
  const auto form =
      post(port_, "/api/v1/capture?seconds=0.2", "pid=" + me, "", "application/x-www-form-urlencoded");
  EXPECT_EQ(form.status, 200) << form.body.substr(0, 300);
  EXPECT_FALSE(json::parse(form.body, nullptr, false).is_discarded());
}

TEST_F(Capture, WithATokenACrossOriginPostIsRefused) {
  const std::string token_file = dir_ + "/token";
  { std::ofstream(token_file) << "s3cret\n"; }
  ASSERT_EQ(::chmod(token_file.c_str(), 0600), 0);
  auto serve = start_serve({"--probes", "cuda_driver", "--token-file", token_file}, "always-on");
  const std::string body = "{\"pid\":" + std::to_string(getpid()) + ",\"seconds\":0.2}";
  const std::string auth = "Authorization: Bearer s3cret\r\n";
  EXPECT_EQ(post(port_, "/api/v1/capture", body).status, 401);
  const auto cross = post(port_, "/api/v1/capture", body, auth + "Origin: http://evil.example\r\n");
  EXPECT_EQ(cross.status, 403) << cross.body;
  const auto same = post(port_, "/api/v1/capture", body,
                         auth + "Origin: http://127.0.0.1:" + std::to_string(port_) + "\r\n");
  EXPECT_EQ(same.status, 200) << same.body.substr(0, 300);
}

}  // namespace
}  // namespace eacgm::test

namespace eacgm::test {
namespace {

// The active-requests gauge on /metrics (the scrape's own request included); -1 unread.
long long active_requests(std::uint16_t port) {
  const std::string body = http::get(port, "/metrics").body;
  const std::string key = "\neacgm_http_active_connections ";
  const auto at = body.find(key);
  return at == std::string::npos ? -1 : std::atoll(body.c_str() + at + key.size());
}

// With 4 workers one capture runs at a time: a second one, of another process, is 503
// while the first holds its worker, and scrapes are answered meanwhile.
TEST_F(Capture, CapturesLeaveWorkersToScrapes) {
  auto serve =
      start_serve({"--probes", "cuda_driver", "--config", config("[serve]\nmax_clients = 4\n")}, "always-on");
  const std::string me = std::to_string(getpid());
  auto first = std::async(std::launch::async, [&] {
    return post(port_, "/api/v1/capture", "{\"pid\":" + me + ",\"seconds\":3}");
  });
  ASSERT_TRUE(eventually([&] { return active_requests(port_) >= 2; }, 10s)) << "the first capture is running";
  const auto second =
      post(port_, "/api/v1/capture", "{\"pid\":" + std::to_string(getppid()) + ",\"seconds\":0.2}");
  EXPECT_EQ(second.status, 503) << second.body;
  EXPECT_EQ(second.header("Retry-After"), "5") << second.head;
  EXPECT_NE(second.body.find("captures are running already"), std::string::npos) << second.body;
  EXPECT_EQ(http::get(port_, "/metrics").status, 200);
  EXPECT_EQ(first.get().status, 200);
  // The worker is free again: so is the next capture.
  const auto third =
      post(port_, "/api/v1/capture", "{\"pid\":" + std::to_string(getppid()) + ",\"seconds\":0.2}");
  EXPECT_EQ(third.status, 200) << third.body.substr(0, 300);
}

}  // namespace
}  // namespace eacgm::test
