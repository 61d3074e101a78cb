// Nodes over a window of the history: per node that wrote to the store, its processes,
// the running ones, its jobs and calls (/api/v1/history/nodes: the web UI's fleet page,
// which so never reads the whole process list).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "history/history_query.h"

namespace eacgm::exporting {

struct HistoryNode {
  std::string node;
  std::size_t processes = 0;
  std::size_t running = 0;
  std::size_t jobs = 0;  // distinct batch job ids of its processes
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
};

// Most calls first (then by name).
std::vector<HistoryNode> history_nodes(const std::vector<history::StoredProcess>& processes);

// [{"node","processes","running","jobs","calls","errors","first_ns","last_ns"}]
nlohmann::ordered_json history_nodes_array(const std::vector<HistoryNode>& nodes);

}  // namespace eacgm::exporting
