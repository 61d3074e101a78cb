// What the agent reads of the configuration file: the trace, the GPU sampling, Python,
// hangs and the probes, and the probe specs it selects. The node adds its own sections
// around it; the agent sees only these.
#pragma once

#include <string>
#include <vector>

#include "agent/hangs_config.h"
#include "agent/nccl_config.h"
#include "agent/python_config.h"
#include "core/probe_spec.h"
#include "core/result.h"
#include "ingest/trace_config.h"
#include "sample/gpu_config.h"

namespace eacgm::agent {

struct AgentConfig {
  ingest::TraceConfig trace;
  sample::GpuConfig gpu;
  PythonConfig python;
  HangsConfig hangs;
  NcclConfig nccl;
  std::vector<std::string> catalogs;  // enabled built-in catalogs (empty: defaults)
  std::vector<ProbeSpec> probes;      // user-defined probe specs
};

// The specs the probe names select: `probes`, else the config's catalogs (or the default
// ones) and the config's own specs. A name that matches nothing is a usage error.
// (Defined with the rest of a job's set-up, in trace_setup.cpp.)
Result<std::vector<ProbeSpec>> select_probe_specs(const AgentConfig& config,
                                                  const std::vector<std::string>& probes);

}  // namespace eacgm::agent
