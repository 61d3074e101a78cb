// JSON of the stragglers across a job's nodes (export/job_stragglers_json.h).
#include "export/job_stragglers_json.h"

#include <fmt/format.h>

namespace eacgm::exporting {

json job_stragglers_json(std::span<const analysis::JobCommStragglers> comms) {
  json out = json::array();
  for (const auto& c : comms) {
    json ranks = json::array();
    for (const auto& r : c.ranks) {
      ranks.push_back(
          json{{"node", r.node},
               {"rank", r.rank},
               {"instances", r.instances},
               {"last", r.last},
               {"mean_lateness_ns", r.mean_lateness_ns},
               {"uncertainty_ns", r.uncertainty_ns < 0 ? json(nullptr) : json(r.uncertainty_ns)}});
    }
    out.push_back(json{{"comm_id", fmt::format("0x{:016x}", c.comm_id)},
                       {"nodes", c.nodes},
                       {"instances", c.instances},
                       {"straggler", c.straggler >= 0 ? json(c.straggler) : json(nullptr)},
                       {"straggler_node", c.straggler >= 0 ? json(c.straggler_node) : json(nullptr)},
                       {"verdict", c.verdict},
                       {"ranks", std::move(ranks)}});
  }
  return out;
}

}  // namespace eacgm::exporting
