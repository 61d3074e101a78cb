// The GPU health events as JSON: `GET /api/v1/gpu_events` (docs/api.md), each with the
// processes on the GPU, their pod, job and rank, and the calls they were in.
#pragma once

#include <string>

#include "analysis/gpu_health.h"
#include "export/api_json.h"

namespace eacgm::exporting {

// {"events":[{"ts_ns","gpu","uuid","kind","detail","count","processes":[{"pid","comm",
//  "rank","local_rank","world_size", workload fields,"calls":[{"tid","domain","name",
//  "ts_ns","age_ns"}]}]}],"total":N,"dropped":N}: oldest first. The workload and rank
// fields come from options' lookups (left out when unset), read when the list is asked for.
json gpu_events_json(const analysis::GpuHealthSummary& health, const ApiOptions& options);

// The route's document: the snapshot's time and sequence, then gpu_events_json's fields.
std::string api_gpu_events(const analysis::AnalysisSnapshot& snap, const ApiOptions& options);

}  // namespace eacgm::exporting
