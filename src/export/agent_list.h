// Every node's agent as the fleet's store lists it (history `agents`): where its API
// answers, its version, and whether it is up (seen within three of its heartbeats) or
// down since it was last seen. GET /api/v1/history/agents and `eacgm history nodes`.
#pragma once

#include <string>

#include "history/history_query.h"

namespace eacgm::exporting {

// {"store","now_ns","agents":[{"node","url","version","started_ns","last_seen_ns",
// "heartbeat_s","up","down_since_ns"}]} (down_since_ns null while up).
std::string agents_json(const history::AgentList& list, const std::string& store);

// One line per node: NODE URL VERSION and "up" or "down since <UTC time>".
std::string render_agents_text(const history::AgentList& list, const std::string& store);

}  // namespace eacgm::exporting
