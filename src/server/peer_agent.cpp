// One agent's request to another's (server/peer_agent.h).
#include "server/peer_agent.h"

#include <fmt/format.h>

#include <cerrno>
#include <utility>

#include "server/history_forward.h"

namespace eacgm::server {

std::string last_seen_text(const history::AgentList& list, const history::StoredAgent& agent) {
  return fmt::format("last seen {} ago", span_text(list.now_ns - agent.last_seen_ns));
}

PeerAnswer ask_peer(const PeerCallOptions& options, const history::StoredAgent& agent,
                    const std::string& seen, const std::string& path, const ApiClient::Fields& params) {
  const std::string& node = agent.node;
  PeerAnswer out;
  const auto fail = [&out](int status, std::string why) {
    out.status = status;
    out.error = std::move(why);
    return out;
  };
  auto client = ApiClient::open(agent.url, options.token, options.timeout);
  if (!client) {
    return fail(502, fmt::format("node {}'s agent at {} cannot be asked: {}; {}", node, agent.url,
                                 client.error(), seen));
  }
  ApiClient::Fields headers;
  if (!options.node.empty()) headers.emplace_back(std::string(kForwardedHeader), options.node);
  auto reply = (*client)->get(path, params, headers);
  if (!reply) {
    const bool late = reply.error_errno() == ETIMEDOUT;
    const std::string why = late ? fmt::format("no answer within {} s", options.timeout.count())
                            : reply.error_errno() == ECONNREFUSED ? "could not connect"
                                                                  : reply.error();
    return fail(late ? 504 : 502,
                fmt::format("node {}'s agent at {} did not answer: {}; {}", node, agent.url, why, seen));
  }
  if (reply->status != 200) {
    const std::string hint =
        reply->status == 401 ? " (the agents of a fleet share one token: [serve] token_file)" : "";
    return fail(502, fmt::format("node {}'s agent at {} answered {}: {}{}", node, agent.url, reply->status,
                                 api_error_text(*reply), hint));
  }
  auto doc = nlohmann::json::parse(reply->body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(502, fmt::format("node {}'s agent at {} answered no JSON document", node, agent.url));
  }
  out.doc = std::move(doc);
  return out;
}

}  // namespace eacgm::server
