// The web UI's job capture route (server/job_capture_route.h).
#include "server/job_capture_route.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "history/job_ranks.h"
#include "history/store_url.h"
#include "server/job_capture.h"

namespace eacgm::server {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t kMaxJobChars = 256;

// {"job","seconds","store","captured","asked","nodes":[{"node","agent","ranks":[{"rank",
// "pid","captured","error"}]}],"not_captured":[line]}: the outcome without the trace.
json outcome_json(const JobCaptureResult& r, const JobCaptureAskBody& ask, const std::string& store) {
  json nodes = json::array();
  std::map<std::string, std::size_t> at;
  for (const auto& c : r.ranks) {
    auto [it, added] = at.emplace(c.node, nodes.size());
    if (added) {
      nodes.push_back(json{{"node", c.node},
                           {"agent", c.agent.empty() ? json(nullptr) : json(c.agent)},
                           {"ranks", json::array()}});
    }
    nodes[it->second]["ranks"].push_back(
        json{{"rank", c.place.rank >= 0 ? json(c.place.rank) : json(nullptr)},
             {"pid", c.place.pid},
             {"captured", c.error.empty() && !r.trace.empty()},
             {"error", c.error.empty() ? json(nullptr) : json(c.error)}});
  }
  return json{{"job", ask.job},         {"seconds", ask.seconds},  {"store", store},
              {"captured", r.captured}, {"asked", r.ranks.size()}, {"nodes", std::move(nodes)},
              {"not_captured", r.notes}};
}

}  // namespace

Result<JobCaptureAskBody> parse_job_capture_ask(const Request& req) {
  const auto body = nlohmann::json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return make_error("the body is not a JSON object (send {\"job\":\"81723\",\"seconds\":5})");
  }
  JobCaptureAskBody ask;
  for (const auto& [k, v] : body.items()) {
    if (k == "job") {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > kMaxJobChars) {
        return make_error(fmt::format(
            "job: the job's id as a string of 1 to {} characters (SLURM_JOB_ID, torchrun's run id)",
            kMaxJobChars));
      }
      ask.job = v.get<std::string>();
    } else if (k == "seconds") {
      if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 60)) {
        return make_error("seconds: a number more than 0 and at most 60");
      }
      ask.seconds = v.get<double>();
    } else {
      return make_error(fmt::format("{}: not a field of a job capture (job, seconds)", k));
    }
  }
  if (ask.job.empty()) return make_error("job: give the job's id (SLURM_JOB_ID, torchrun's run id)");
  return ask;
}

void add_job_capture_route(HttpServer& http, JobCaptureRouteParts parts) {
  auto shared = std::make_shared<const JobCaptureRouteParts>(std::move(parts));
  auto running = std::make_shared<std::atomic<bool>>(false);
  http.post_route("/api/v1/capture/job", [shared, running](const Request& req) {
    auto ask = parse_job_capture_ask(req);
    if (!ask) return Response::json_error(400, ask.error());
    if (running->exchange(true)) {
      Response r = Response::json_error(503, "a job capture is running already: try again when it ends");
      r.headers.emplace_back("Retry-After", "5");
      return r;
    }
    const struct Done {
      std::atomic<bool>& flag;
      ~Done() { flag.store(false); }
    } done{*running};
    const std::string store = history::redact_store_url(shared->fleet->url());
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const auto lookback = static_cast<std::int64_t>(shared->lookback_s * 1e9);
    auto places = shared->fleet->query<history::JobPlaces>(
        history::HistoryQuery{}, [&](history::Store& s, history::Tier) {
          return history::read_job_places(s, ask->job, now, lookback,
                                          static_cast<std::int64_t>(history::Store::kStandingsKeptNs));
        });
    if (!places)
      return Response::json_error(503,
                                  fmt::format("reading the job's ranks in {}: {}", store, places.error()));
    const JobCaptureResult result =
        capture_job(*places, store, JobCaptureAsk{ask->job, ask->seconds, shared->token, shared->lookback_s});
    const json outcome = outcome_json(result, *ask, store);
    if (!result.error.empty()) {
      json doc{{"error", result.error}};
      for (const auto& [k, v] : outcome.items()) doc[k] = v;
      return Response::json(doc.dump(), result.none_running ? 404 : 502);
    }
    // The outcome's fields, then the trace as the agents' text merged (not parsed again).
    std::string body = outcome.dump();
    body.pop_back();
    body += ",\"trace\":";
    body += result.trace;
    while (!body.empty() && body.back() == '\n') body.pop_back();
    body += "}\n";
    return Response::json(std::move(body));
  });
}

}  // namespace eacgm::server
