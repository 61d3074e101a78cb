// The node agent for Python: `eacgm.Agent` starts the agent `eacgm serve` runs, on a
// thread of its own in the Python process, with one call (node::start_in_background), and
// reads its report. Nothing here touches Python: the bindings call it with the GIL
// released.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/trace_environment.h"
#include "agent/trace_setup.h"
#include "core/result.h"
#include "node/node_agent.h"

namespace eacgm::pybind {

struct NodeArgs {
  std::string config_path;           // a TOML file; "" the embedded defaults
  std::string listen;                // HOST:PORT; port 0: the system picks one
  std::optional<std::string> store;  // unset: [store] url; "off": none
  std::vector<std::string> probes;   // catalog or spec names; empty: the config's
  std::string mode;                  // "per-call", "always-on"; "" the daemon's default
  bool sample_gpus = true;
  std::string search_path = agent::kDefaultSearchPath;  // $PATH, read by the module
  std::string nvml_library;                             // $EACGM_NVML_LIBRARY, read by the module
  agent::DutyOverrides duty;                            // EACGM_DUTY_*, read by the module
};

// Starts the agent and waits until its probes are attached. A bad request (config,
// listen address, store, mode) fails with kUsage; BPF and attach failures otherwise.
Result<std::unique_ptr<node::NodeAgent>> start_node(const NodeArgs& args);

// The `eacgm run --json` document of the agent's latest snapshot; "" before the first.
std::string node_report_json(const node::NodeAgent& agent);

}  // namespace eacgm::pybind
