// JobRanks: where a batch job's ranks run, as the fleet's store knows it: its live
// processes (the `processes` rows whose job is J, shipped or written by each node), their
// ranks (the row's RANK, else the NCCL standings of the same node and pid), the other ranks
// of the communicators they are in (nccl_standings, for nodes whose processes are not in
// the store yet), each node's agent (`agents`: where its API answers) and its clock against
// the store's (`node_clocks`). What `eacgm capture --job` asks of each node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/job_verdict.h"
#include "history/history_query.h"
#include "history/store.h"

namespace eacgm::history {

struct JobRankPlace {
  long rank = -1;  // -1: neither its row nor a standing says
  std::uint32_t pid = 0;
  std::string comm;  // "" when only a standing names it
};

struct JobNodePlace {
  std::string node;
  std::vector<JobRankPlace> ranks;     // by rank, unknown ranks last (by pid)
  std::string agent_url;               // "" when the node has no row in `agents`
  bool agent_up = false;               // seen within three heartbeats
  std::optional<ClockEstimate> clock;  // the store's clock minus the node's; none: not measured
};

struct JobPlaces {
  std::string job;
  std::vector<JobNodePlace> nodes;  // by node
};

// The places of `job` from what the store answered (pure: the tests build the inputs).
// Exited processes are left out; a pid seen twice on a node counts once (its last row).
JobPlaces job_places_of(const std::string& job, const std::vector<StoredProcess>& processes,
                        const std::vector<analysis::RankReport>& standings, const AgentList& agents,
                        const std::vector<NodeClock>& clocks);

// Reads the store: the processes seen in the last `lookback_ns` before `now_ns` (the
// store's window), the standings written since `now_ns - standings_ns`, the agents and
// the clocks (a store that keeps no clocks: none). An error names what could not be read.
Result<JobPlaces> read_job_places(Store& store, const std::string& job, std::int64_t now_ns,
                                  std::int64_t lookback_ns, std::int64_t standings_ns);

}  // namespace eacgm::history
