// HistoryForward: where a history request that names another node is answered. This
// agent's store answers when it keeps that node's rows at the window's tier; else the
// fleet's store when it does; else that node's own agent, found in the fleet store's
// `agents`: a node that ships its rollups ([store] fleet_url) keeps its raw intervals to
// itself, so a drill-down below a minute asks it. The request goes on unchanged with this
// agent's bearer token (the agents of one fleet share one token file) and the header
// kForwardedHeader, so a forwarded request is always answered where it lands, never
// forwarded again; the answer gets "source": {"node", "agent"}. A node without an agent
// row, or whose agent does not answer within the timeout, is a JSON error naming the
// node, the URL tried and when the agent was last seen (502; 504 for no answer in time).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "history/history_reader.h"
#include "server/http_server.h"
#include "server/peer_agent.h"

namespace eacgm::server {

// Where a history request is answered.
enum class HistorySource { kLocal, kFleet, kAgent };

// What decides it.
struct HistoryRouteFacts {
  bool other_node = false;                    // the request names a node that is not this agent's
  bool forwarded = false;                     // it came from another agent (kForwardedHeader)
  history::Tier tier = history::Tier::kRaw;   // the tier the window is answered at
  history::NodeKeeping local;                 // what this agent's store keeps of the node
  std::optional<history::NodeKeeping> fleet;  // the fleet's store's, when it is another store
};

// Whether a store keeping `k` of a node answers a window of it at `tier`: the node's rows
// are there, and for the raw tier not only its rollups.
bool keeps(const history::NodeKeeping& k, history::Tier tier);
HistorySource choose_history_source(const HistoryRouteFacts& facts);

// "12 s", "5 min", "3 h", "2 d" (rounded down; a negative span is "0 s").
std::string span_text(std::int64_t ns);

// node: this agent's; token: the one sent to the other agents (server/peer_agent.h).
using HistoryForwardOptions = PeerCallOptions;

class HistoryForward {
 public:
  // `local`: this agent's store; `fleet`: the fleet's store, where the agents' rows are
  // (the same reader when the node has no fleet store of its own).
  HistoryForward(HistoryForwardOptions options, std::shared_ptr<history::HistoryReader> local,
                 std::shared_ptr<history::HistoryReader> fleet);

  struct Route {
    HistorySource source = HistorySource::kLocal;
    bool known = false;  // a store here has the node's rows (or rollups)
  };
  // Where `req` (its window `q`) is answered; an error when a store could not say.
  Result<Route> route_of(const Request& req, const history::HistoryQuery& q) const;
  // `req` asked of the agent of `node`. None when the node has no agent row and no store
  // here knows it (`known`): a name nobody wrote is answered here, with no rows.
  std::optional<Response> ask_agent(const Request& req, const std::string& node, bool known) const;

  const std::shared_ptr<history::HistoryReader>& fleet() const { return fleet_; }

 private:
  HistoryForwardOptions options_;
  std::shared_ptr<history::HistoryReader> local_;
  std::shared_ptr<history::HistoryReader> fleet_;
};

}  // namespace eacgm::server
