// PeerAgent: one agent asking another node's agent, found in the fleet store's `agents`
// (history/history_query.h StoredAgent): a GET with the fleet's bearer token (the agents
// of one fleet share one token file, [serve] token_file) and the header kForwardedHeader
// naming the asking node, so the agent asked answers from its own data and never asks on.
// What comes back is the agent's JSON document, or why there is none, in words that name
// the node, the URL tried and when the store last saw the agent, with the HTTP status a
// route answering for it gives (502; 504 for no answer within the timeout).
// HistoryForward (a drill-down into another node's raw rows) and JobStacks (the waiting
// ranks' Python stacks) ask through it.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "history/history_query.h"
#include "server/api_client.h"

namespace eacgm::server {

// Set on a request one agent sends another (its value: the asking node).
inline constexpr std::string_view kForwardedHeader = "X-Eacgm-Forwarded-By";

struct PeerCallOptions {
  std::string node;   // this agent's node ("" from a command line)
  std::string token;  // the bearer token sent ("" none)
  std::chrono::seconds timeout{5};
};

struct PeerAnswer {
  int status = 200;                   // 502 or 504 when `error` says why there is no document
  std::string error;                  // "" when `doc` is the agent's answer
  std::optional<nlohmann::json> doc;  // a JSON object
  bool ok() const { return error.empty(); }
};

// "last seen 12 s ago", on the store's clock of `list`.
std::string last_seen_text(const history::AgentList& list, const history::StoredAgent& agent);

// GET `path` with `params` of `agent`; `seen` (last_seen_text) ends each error message.
PeerAnswer ask_peer(const PeerCallOptions& options, const history::StoredAgent& agent,
                    const std::string& seen, const std::string& path, const ApiClient::Fields& params);

}  // namespace eacgm::server
