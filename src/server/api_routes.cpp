// The /api/v1 routes: each reads the source's newest snapshot once, so an answer is
// consistent within itself; query parameters are checked before the snapshot is read.
#include "server/api_routes.h"

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "export/gpu_events_json.h"
#include "export/inflight_json.h"
#include "export/json_text.h"
#include "server/flight_recorder_routes.h"
#include "server/python_routes.h"
#include "server/query_params.h"
#include "server/summary_stream.h"

namespace eacgm::server {
namespace {

// /api/v1/series?window=S: the last S seconds (default 900).
constexpr std::uint64_t kDefaultWindowS = 900;

}  // namespace

void add_api_routes(HttpServer& http, std::shared_ptr<const SnapshotSource> source,
                    const exporting::ApiOptions& options, std::shared_ptr<JobStacks> stacks) {
  using Body = std::function<std::string(const analysis::AnalysisSnapshot&)>;
  auto json_route = [&](const char* path, Body body) {
    http.route(path, [source, body = std::move(body)](const Request&) {
      auto snap = source->latest();
      if (!snap) return Response::json_error(503, kNoSnapshotYet);
      return Response::json(body(*snap));
    });
  };
  json_route("/api/v1/gpus", exporting::api_gpus);
  json_route("/api/v1/functions", exporting::api_functions);
  json_route("/api/v1/counters", exporting::api_counters);
  json_route("/api/v1/memory", exporting::api_memory);
  json_route("/api/v1/kernels",
             [](const analysis::AnalysisSnapshot& s) { return exporting::api_kernels(s); });
  json_route("/api/v1/nccl", exporting::api_nccl);
  json_route("/api/v1/gpu_time",
             [](const analysis::AnalysisSnapshot& s) { return exporting::api_gpu_time(s); });
  json_route("/api/v1/processes",
             [options](const analysis::AnalysisSnapshot& s) { return exporting::api_processes(s, options); });
  json_route("/api/v1/anomalies", exporting::api_anomalies);
  if (!stacks) {
    stacks = std::make_shared<JobStacks>(JobStackOptions{}, [] {
      return Result<history::AgentList>(make_error("this agent reads no fleet store ([store] url)"));
    });
  }
  http.route("/api/v1/inflight", [source, options, stacks](const Request& req) {
    bool want_stacks = false;
    if (auto s = req.param("stacks")) {
      if (*s != "0" && *s != "1") return Response::json_error(400, "stacks: 0 or 1");
      want_stacks = *s == "1";
    }
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    if (!want_stacks) return Response::json(exporting::api_inflight(*snap, options));
    exporting::json doc = exporting::inflight_doc(*snap, options);
    exporting::json& job = doc["job"];
    std::vector<exporting::json*> verdicts;
    for (auto& c : job["communicators"]) verdicts.push_back(&c);
    // A request from another agent is answered from this node alone (no request goes on).
    const bool ask_others = req.header(kForwardedHeader).empty();
    job["stacks"] = stacks->attach(verdicts, job["node"].get<std::string>(),
                                   &snap->get<analysis::InflightSummary>(), ask_others);
    return Response::json(exporting::json_text(doc));
  });
  http.route("/api/v1/inflight/stacks", [source](const Request& req) {
    auto pids = pids_param(req, JobStackOptions{}.max_pids);
    if (!pids) return Response::json_error(400, pids.error());
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    exporting::json doc{
        {"time_ns",
         std::chrono::duration_cast<std::chrono::nanoseconds>(snap->time.time_since_epoch()).count()},
        {"stacks", exporting::inflight_stacks_json(snap->get<analysis::InflightSummary>(), *pids)}};
    return Response::json(exporting::json_text(doc));
  });
  json_route("/api/v1/gpu_events", [options](const analysis::AnalysisSnapshot& s) {
    return exporting::api_gpu_events(s, options);
  });
  add_python_routes(http, source);
  add_flight_recorder_routes(http, source);
  http.route("/api/v1/series", [source](const Request& req) {
    std::uint64_t window = kDefaultWindowS;
    if (auto w = req.param("window")) {
      auto v = parse_number(*w, 1, 3600);
      if (!v) return Response::json_error(400, "window: a whole number of seconds from 1 to 3600");
      window = *v;
    }
    auto points = source->series(window);
    if (!points) return Response::json_error(503, kNoSnapshotYet);
    return Response::json(exporting::api_series(*points));
  });
}

void add_stream_route(HttpServer& http, std::shared_ptr<SseChannel> channel) {
  http.route("/api/v1/stream", [channel = std::move(channel)](const Request& req) {
    SseChannel::Filter filter;
    if (auto calls = req.param("calls")) {
      if (*calls != "0" && *calls != "1") return Response::json_error(400, "calls: 0 or 1");
      filter.tagged = *calls == "1";
    }
    auto pid = pid_param(req);
    if (!pid) return Response::json_error(400, pid.error());
    if (*pid) {
      if (!filter.tagged) return Response::json_error(400, "pid: only with calls=1");
      filter.tag = **pid;
    }
    filter.max_tagged_per_second = SummaryStream::kCallsPerSecond;
    if (auto last = req.header("Last-Event-ID"); !last.empty()) {
      auto id = parse_number(last, 0, UINT64_MAX);
      if (!id) return Response::json_error(400, "Last-Event-ID: the id of an event of this stream");
      filter.last_event_id = *id;
    }
    return event_stream(*channel, filter);
  });
}

}  // namespace eacgm::server
