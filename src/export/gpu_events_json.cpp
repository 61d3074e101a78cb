// JSON of the GPU health events (export/gpu_events_json.h).
#include "export/gpu_events_json.h"

#include <chrono>

#include "export/json_text.h"
#include "export/workload_labels.h"

namespace eacgm::exporting {
namespace {

json process_json(const analysis::GpuEventProcess& p, const ApiOptions& options) {
  json calls = json::array();
  for (const analysis::GpuEventCall& c : p.calls) {
    calls.push_back(json{{"tid", c.tid},
                         {"domain", c.domain},
                         {"name", c.function},
                         {"ts_ns", c.ts_ns},
                         {"age_ns", c.age_ns}});
  }
  json entry{{"pid", p.pid}, {"comm", p.comm}};
  if (options.rank_of_pid) {
    const sample::RankInfo r = options.rank_of_pid(p.pid);
    entry["rank"] = opt(r.rank);
    entry["local_rank"] = opt(r.local_rank);
    entry["world_size"] = opt(r.world_size);
  }
  if (options.workload_of_pid) add_workload_fields(entry, options.workload_of_pid(p.pid));
  entry["calls"] = std::move(calls);
  return entry;
}

}  // namespace

json gpu_events_json(const analysis::GpuHealthSummary& health, const ApiOptions& options) {
  json events = json::array();
  for (const analysis::GpuHealthEvent& e : health.events) {
    json processes = json::array();
    for (const auto& p : e.processes) processes.push_back(process_json(p, options));
    events.push_back(json{{"ts_ns", e.ts_ns},
                          {"gpu", e.gpu},
                          {"uuid", e.uuid},
                          {"kind", e.kind},
                          {"detail", e.detail},
                          {"count", e.count},
                          {"processes", std::move(processes)}});
  }
  return json{{"events", std::move(events)}, {"total", health.total}, {"dropped", health.dropped}};
}

std::string api_gpu_events(const analysis::AnalysisSnapshot& snap, const ApiOptions& options) {
  json doc{
      {"time_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(snap.time.time_since_epoch()).count()},
      {"sequence", snap.sequence}};
  doc.update(gpu_events_json(snap.get<analysis::GpuHealthSummary>(), options));
  return json_text(doc);
}

}  // namespace eacgm::exporting
