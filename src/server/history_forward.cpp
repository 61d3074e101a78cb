// A history request's way to the store or the agent that keeps its rows
// (server/history_forward.h).
#include "server/history_forward.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "history/store_url.h"

namespace eacgm::server {
namespace {

using json = nlohmann::json;

// A JSON error naming the node, the agent's URL (null: none) and when it was last seen.
Response agent_error(int status, const std::string& message, const std::string& node,
                     const history::StoredAgent* agent) {
  json doc{{"error", message},
           {"node", node},
           {"agent", agent ? json(agent->url) : json(nullptr)},
           {"last_seen_ns", agent ? json(agent->last_seen_ns) : json(nullptr)}};
  return Response::json(doc.dump(), status);
}

}  // namespace

bool keeps(const history::NodeKeeping& k, history::Tier tier) {
  return k.written && !(k.rollups_only && tier == history::Tier::kRaw);
}

HistorySource choose_history_source(const HistoryRouteFacts& facts) {
  if (!facts.other_node || facts.forwarded) return HistorySource::kLocal;
  if (keeps(facts.local, facts.tier)) return HistorySource::kLocal;
  if (facts.fleet && keeps(*facts.fleet, facts.tier)) return HistorySource::kFleet;
  return HistorySource::kAgent;
}

std::string span_text(std::int64_t ns) {
  constexpr std::int64_t kMinute = 60, kHour = 3600, kDay = 86400;
  const std::int64_t s = std::max<std::int64_t>(ns, 0) / 1'000'000'000;
  if (s < 2 * kMinute) return fmt::format("{} s", s);
  if (s < 2 * kHour) return fmt::format("{} min", s / kMinute);
  if (s < 2 * kDay) return fmt::format("{} h", s / kHour);
  return fmt::format("{} d", s / kDay);
}

HistoryForward::HistoryForward(HistoryForwardOptions options, std::shared_ptr<history::HistoryReader> local,
                               std::shared_ptr<history::HistoryReader> fleet)
    : options_(std::move(options)), local_(std::move(local)), fleet_(std::move(fleet)) {}

Result<HistoryForward::Route> HistoryForward::route_of(const Request& req,
                                                       const history::HistoryQuery& q) const {
  HistoryRouteFacts facts;
  facts.other_node = q.node && *q.node != options_.node;
  facts.forwarded = !req.header(kForwardedHeader).empty();
  if (!facts.other_node || facts.forwarded || !local_) return Route{};
  const std::string& node = *q.node;
  auto local = local_->query<history::NodeKeeping>(q, [&](history::Store& s, history::Tier tier) {
    facts.tier = tier;
    return s.node_keeping(node);
  });
  if (!local) return std::move(local).take_error();
  facts.local = *local;
  if (fleet_ && fleet_ != local_ && !keeps(facts.local, facts.tier)) {
    auto fleet = fleet_->query<history::NodeKeeping>(
        q, [&](history::Store& s, history::Tier) { return s.node_keeping(node); });
    if (!fleet) return make_error("the fleet store: " + fleet.error());
    facts.fleet = *fleet;
  }
  return Route{choose_history_source(facts), facts.local.written || (facts.fleet && facts.fleet->written)};
}

std::optional<Response> HistoryForward::ask_agent(const Request& req, const std::string& node,
                                                  bool known) const {
  const std::shared_ptr<history::HistoryReader>& where = fleet_ ? fleet_ : local_;
  const std::string store = history::redact_store_url(where->url());
  auto list = where->query<history::AgentList>(history::HistoryQuery{},
                                               [](history::Store& s, history::Tier) { return s.agents(); });
  if (!list) {
    return agent_error(
        503, fmt::format("node {}'s agent: reading the agents of {} failed: {}", node, store, list.error()),
        node, nullptr);
  }
  const auto row = std::find_if(list->rows.begin(), list->rows.end(),
                                [&](const history::StoredAgent& a) { return a.node == node; });
  if (row == list->rows.end()) {
    if (!known) return std::nullopt;
    return agent_error(502,
                       fmt::format("node {} has no agent in the fleet store {}: its rows below a minute are "
                                   "kept only on the node, and no agent there said where it answers",
                                   node, store),
                       node, nullptr);
  }
  const history::StoredAgent& agent = *row;
  PeerAnswer answer = ask_peer(options_, agent, last_seen_text(*list, agent), req.path, req.params);
  if (!answer.ok()) return agent_error(answer.status, answer.error, node, &agent);
  json& doc = *answer.doc;
  doc["source"] = json{{"node", node}, {"agent", agent.url}};
  return Response::json(doc.dump());
}

}  // namespace eacgm::server
