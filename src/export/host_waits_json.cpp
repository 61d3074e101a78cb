// Host waits as JSON (export/host_waits_json.h).
#include "export/host_waits_json.h"

#include <algorithm>
#include <string>

namespace eacgm::exporting {

json host_waits_json(const analysis::HostWaitSummary& waits) {
  json processes = json::array();
  // Rows come by pid, then kind: one object per pid.
  for (std::size_t i = 0; i < waits.rows.size();) {
    const auto& first = waits.rows[i];
    json list = json::array();
    for (; i < waits.rows.size() && waits.rows[i].pid == first.pid; ++i) {
      const auto& r = waits.rows[i];
      const bool timed = r.timed > 0;
      list.push_back(json{{"kind", std::string(host_wait_kind_name(r.kind))},
                          {"calls", r.calls},
                          {"timed", r.timed},
                          {"total_ns", timed ? json(r.total_ns) : json(nullptr)},
                          {"estimated", r.estimated},
                          {"share", timed && r.wall_ns > 0 ? json(r.share) : json(nullptr)},
                          {"p50_ns", timed ? json(r.p50_ns) : json(nullptr)},
                          {"p99_ns", timed ? json(r.p99_ns) : json(nullptr)},
                          {"max_ns", timed ? json(r.max_ns) : json(nullptr)}});
    }
    processes.push_back(json{{"pid", first.pid},
                             {"comm", first.comm},
                             {"exited", first.exited},
                             {"wall_ns", static_cast<std::uint64_t>(first.wall_ns)},
                             {"waits", std::move(list)}});
  }
  json kinds = json::array();
  for (std::size_t k = 0; k < kHostWaitKinds; ++k) {
    const auto& sketch = waits.by_kind[k];
    if (waits.calls_by_kind[k] == 0 && sketch.count() == 0) continue;
    const bool timed = sketch.count() > 0;
    kinds.push_back(json{{"kind", std::string(host_wait_kind_name(static_cast<HostWaitKind>(k)))},
                         {"calls", std::max(waits.calls_by_kind[k], sketch.count())},
                         {"timed", sketch.count()},
                         {"p50_ns", timed ? json(sketch.quantile(0.5)) : json(nullptr)},
                         {"p99_ns", timed ? json(sketch.quantile(0.99)) : json(nullptr)}});
  }
  return json{{"processes", std::move(processes)},
              {"kinds", std::move(kinds)},
              {"untracked", waits.untracked},
              {"exited_dropped", waits.exited_dropped}};
}

}  // namespace eacgm::exporting
