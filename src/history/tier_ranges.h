// Where the sums of a window are read from. A window asked of one tier can be read,
// over the complete minutes and hours a node has already rolled up, from the rolled
// rows: the same sums and the same merged sketches (rollups are exact) from 6 to 360
// times fewer rows. Only where the tier asked for still has its rows (retention and the
// size cap delete the finer tiers first): the answer stays the tier's own.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "history/history_query.h"

namespace eacgm::history {

// What a node has rolled up: its marks (every row of the finer tier before them is in
// the coarser one) and the oldest row it still has in the tier asked for.
struct NodeRollups {
  std::int32_t node = 0;
  std::int64_t rolled_1m = 0;
  std::int64_t rolled_1h = 0;
  std::optional<std::int64_t> oldest;  // none: the tier has no rows of the node
  std::int64_t rolled_jobs = 0;        // its hours in the job report's rollups (job_rollup.h)
  // Its rows come rolled up from its own store (history/fleet_shipper.h): it has no finer
  // rows, so its whole minutes and hours are read from the rollups whatever the tier.
  bool rollups_only = false;
};

struct TierRange {
  std::int32_t node = 0;
  int tier = 0;
  std::int64_t lo = 0;  // [lo, hi) of t_ns
  std::int64_t hi = 0;
};

// The ranges that together answer [from_ns, to_ns) of `tier` for one node.
std::vector<TierRange> tier_ranges(const NodeRollups& n, Tier tier, std::int64_t from_ns, std::int64_t to_ns);

}  // namespace eacgm::history
