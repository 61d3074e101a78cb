// A job's ranks captured on their nodes and merged (server/job_capture.h).
#include "server/job_capture.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>
#include <thread>
#include <utility>

#include "export/json_text.h"
#include "export/perfetto_merge.h"
#include "server/api_client.h"

namespace eacgm::server {
namespace {

using json = nlohmann::json;

// One rank to capture and what came back.
struct RankCapture {
  JobRankCapture out;
  bool agent_up = false;
  std::int64_t offset_ns = 0;
  std::optional<history::ClockEstimate> clock;
  std::string trace;  // the agent's answer
};

std::string label_of(const std::string& node, const history::JobRankPlace& place) {
  return place.rank >= 0 ? fmt::format("{}/rank {}", node, place.rank)
                         : fmt::format("{}/pid {}", node, place.pid);
}

// One request for all of a node's ranks (`pids`: one window, one of the agent's capture
// slots); each rank gets its trace or why it has none.
void capture_node(std::span<RankCapture*> ranks, const std::string& token, double seconds) {
  const std::string& url = ranks.front()->out.agent;
  const auto fail = [&](const std::string& why) {
    for (RankCapture* c : ranks) {
      c->out.error = why;
      if (!c->agent_up) c->out.error += " (the store lists its agent as down)";
    }
  };
  auto client = ApiClient::open(url, token, std::chrono::seconds(static_cast<long>(std::ceil(seconds)) + 30));
  if (!client) return fail(fmt::format("the agent's URL in the store: {}", client.error()));
  json ask{{"pids", json::array()}, {"seconds", seconds}};
  for (const RankCapture* c : ranks) ask["pids"].push_back(c->out.place.pid);
  auto reply = (*client)->post_json("/api/v1/capture", ask.dump());
  if (!reply) return fail(reply.error());
  if (reply->status != 200) {
    return fail(fmt::format("the agent at {} answered {}: {}", url, reply->status, api_error_text(*reply)));
  }
  json doc = json::parse(reply->body, nullptr, false);
  reply->body.clear();
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("captures") || !doc["captures"].is_array()) {
    return fail(fmt::format("the agent at {} answered with no list of captures", url));
  }
  for (RankCapture* c : ranks) {
    c->out.error = fmt::format("the agent at {} answered without pid {}", url, c->out.place.pid);
    for (auto& one : doc["captures"]) {
      if (!one.is_object() || one.value("pid", json()) != json(c->out.place.pid)) continue;
      if (one.contains("trace")) {
        c->trace = exporting::json_text(one["trace"]);
        one["trace"] = nullptr;  // the text is all that is needed of it now
        c->out.error.clear();
      } else {
        c->out.error = fmt::format("the agent at {} answered {}: {}", url, one.value("status", 0),
                                   one.value("error", std::string("no trace")));
      }
    }
  }
}

json about_of(const RankCapture& c) {
  json about{{"node", c.out.node}, {"pid", c.out.place.pid}, {"agent", c.out.agent}};
  about["rank"] = c.out.place.rank >= 0 ? json(c.out.place.rank) : json(nullptr);
  about["clock_uncertainty_ns"] = c.clock ? json(c.clock->uncertainty_ns) : json(nullptr);
  return about;
}

}  // namespace

JobCaptureResult capture_job(const history::JobPlaces& places, const std::string& store_name,
                             const JobCaptureAsk& ask) {
  JobCaptureResult result;
  std::vector<RankCapture> captures;
  for (const auto& n : places.nodes) {
    for (const auto& r : n.ranks) {
      RankCapture c;
      c.out.node = n.node;
      c.out.agent = n.agent_url;
      c.out.place = r;
      c.out.label = label_of(n.node, r);
      c.agent_up = n.agent_up;
      c.clock = n.clock;
      c.offset_ns = n.clock ? n.clock->offset_ns : 0;
      if (c.out.agent.empty())
        c.out.error = fmt::format("node {} has no agent in {}'s agents", n.node, store_name);
      captures.push_back(std::move(c));
    }
  }
  const auto finish = [&] {
    for (auto& c : captures) result.ranks.push_back(std::move(c.out));
    return std::move(result);
  };
  if (captures.empty()) {
    result.none_running = true;
    result.error = fmt::format(
        "job {}: no running process of this job in {} over the last {:.0f} s (each node's agent writes its "
        "processes there every interval)",
        ask.job, store_name, ask.lookback_s);
    return finish();
  }
  // Every node's request at once: the agents' windows start within a round trip of each
  // other.
  {
    std::vector<std::vector<RankCapture*>> by_node;
    for (auto& c : captures) {
      if (!c.out.error.empty()) continue;
      if (by_node.empty() || by_node.back().front()->out.node != c.out.node) by_node.emplace_back();
      by_node.back().push_back(&c);
    }
    std::vector<std::jthread> threads;
    threads.reserve(by_node.size());
    for (auto& ranks : by_node) {
      threads.emplace_back([&ranks, &ask] { capture_node(ranks, ask.token, ask.seconds); });
    }
  }
  std::vector<exporting::TracePart> parts;
  std::vector<exporting::MissingPart> missing;
  for (auto& c : captures) {
    if (result.nodes.empty() || result.nodes.back() != c.out.node) result.nodes.push_back(c.out.node);
    const long key = c.out.place.rank >= 0 ? c.out.place.rank : (1L << 30) + c.out.place.pid;
    if (c.out.error.empty()) {
      parts.push_back(exporting::TracePart{c.out.label, std::move(c.trace), c.offset_ns, key, about_of(c)});
    } else {
      result.notes.push_back(
          fmt::format("{} (pid {}) not captured: {}", c.out.label, c.out.place.pid, c.out.error));
      missing.push_back(exporting::MissingPart{c.out.label, c.out.error, key, about_of(c)});
    }
  }
  if (parts.empty()) {
    result.error = fmt::format("job {}: no node's agent answered ({} ranks on {} nodes asked)", ask.job,
                               captures.size(), result.nodes.size());
    return finish();
  }
  const json about{{"job", ask.job},
                   {"store", store_name},
                   {"seconds", ask.seconds},
                   {"nodes", result.nodes},
                   {"clock",
                    "ts: Unix-epoch microseconds on the store's clock: each node's times plus its offset_ns "
                    "(node_clocks: the store's clock minus the node's; 0 where not measured)"}};
  // An answer that is no capture (a proxy's page, a cut body) is one rank not captured.
  std::vector<exporting::MissingPart> refused;
  auto merged = exporting::merge_perfetto_traces(parts, missing, about, &refused);
  for (const auto& r : refused) {
    result.notes.push_back(fmt::format("{} not captured: {}", r.label, r.reason));
    for (auto& c : captures) {
      if (c.out.label == r.label) c.out.error = r.reason;
    }
  }
  if (merged && refused.size() == parts.size()) {
    merged =
        make_error(fmt::format("job {}: no node's agent answered with a capture ({} ranks on {} nodes asked)",
                               ask.job, captures.size(), result.nodes.size()));
  }
  if (!merged) {
    result.error = merged.error();
    return finish();
  }
  result.captured = parts.size() - refused.size();
  result.trace = std::move(*merged);
  return finish();
}

}  // namespace eacgm::server
