// eacgm_agent_* and eacgm_build_info: the agent process itself (CPU time and resident
// memory, read now; its start), the build and mode it runs, and whether it samples the
// GPUs.
#pragma once

#include <string>

#include "core/prometheus_text.h"

namespace eacgm::exporting {

struct AgentInfo {
  double start_time_seconds = 0;  // Unix time
  std::string mode;               // "always-on" or "per-call"; "" unknown
  bool gpu_sampling = false;      // a GPU sampling pass has arrived
};

void append_agent_metrics(ExpositionWriter& out, const AgentInfo& info);

}  // namespace eacgm::exporting
