// In-flight families for /metrics, named and described by metrics_table.
#include "export/inflight_metrics.h"

#include <map>
#include <string>
#include <utility>

#include "analysis/hang_diagnosis.h"
#include "analysis/inflight_calls.h"
#include "export/metrics_table.h"

namespace eacgm::exporting {

void append_inflight_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                             const CallMetricsOptions& options) {
  // The rows are oldest first: a function's or a process's first row is its oldest.
  std::map<std::pair<std::string, std::string>, bool> functions_seen;
  std::map<std::uint32_t, bool> processes_seen;
  std::vector<const analysis::InflightRow*> functions, processes;
  for (const analysis::InflightRow& row : snap.get<analysis::InflightSummary>().rows) {
    const CallEvent& c = row.call.call;
    if (functions.size() < options.max_function_series &&
        functions_seen.emplace(std::pair{std::string(c.domain()), std::string(c.function())}, true).second) {
      functions.push_back(&row);
    }
    if (processes.size() < options.max_process_series && processes_seen.emplace(c.pid, true).second) {
      processes.push_back(&row);
    }
  }
  begin_family(out, "eacgm_call_in_flight_max_seconds");
  for (const analysis::InflightRow* row : functions) {
    out.add({{"domain", std::string(row->call.call.domain())},
             {"function", std::string(row->call.call.function())}},
            static_cast<double>(row->age_ns) / 1e9);
  }
  begin_family(out, "eacgm_process_stuck_seconds");
  for (const analysis::InflightRow* row : processes) {
    const CallEvent& c = row->call.call;
    Labels l{{"pid", std::to_string(c.pid)}, {"comm", std::string(c.comm_view())}};
    if (options.rank_of_pid) {
      const sample::RankInfo rank = options.rank_of_pid(c.pid);
      if (rank.rank) l.push_back({"rank", std::to_string(*rank.rank)});
      if (rank.local_rank) l.push_back({"local_rank", std::to_string(*rank.local_rank)});
      if (rank.world_size) l.push_back({"world_size", std::to_string(*rank.world_size)});
    }
    out.add(l, static_cast<double>(row->age_ns) / 1e9);
  }
  std::uint64_t by_comm = 0, by_age = 0;
  for (const analysis::Hang& h : snap.get<analysis::HangSummary>().current)
    ++(h.rule == "age" ? by_age : by_comm);
  begin_family(out, "eacgm_hangs");
  out.add({{"rule", "communicator"}}, static_cast<double>(by_comm));
  out.add({{"rule", "age"}}, static_cast<double>(by_age));
}

}  // namespace eacgm::exporting
