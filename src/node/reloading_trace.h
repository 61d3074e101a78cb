// A daemon's trace: the agent run again with a new configuration each time one is asked
// for and checks out, the consumers kept across (their history survives a reload).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "agent/agent.h"
#include "agent/trace_setup.h"

namespace eacgm::node {

struct ReloadingTrace {
  // Reads the configuration again and checks it whole (a reload): the agent's part, or
  // why it cannot replace the running one.
  std::function<Result<agent::AgentConfig>()> reload_config;
  agent::TraceRequest request;
  agent::TraceConsumers consumers;  // from make_consumers, once
  agent::Agent::Notice notice;
  // After a reload, with the configuration it replaced: to say what applies only at the
  // daemon's next start.
  std::function<void(const agent::AgentConfig& before, const agent::AgentConfig& after)> on_reload;
};

// Traces with `config` until `stop` is non-zero. When `reload` is set, the configuration
// is read again: one that checks out ends the running trace and starts the next; a bad
// one is reported through `notice` and the running trace goes on. Returns 0, or the
// start-up failure's exit code (exit_code_for).
int run_reloading(agent::AgentConfig config, const ReloadingTrace& trace, const std::atomic<int>& stop,
                  std::atomic<bool>& reload);

}  // namespace eacgm::node
