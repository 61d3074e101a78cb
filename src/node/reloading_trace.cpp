// The reload loop: a new configuration is checked whole before the running trace is
// touched, so a bad file leaves the old one running.
#include "node/reloading_trace.h"

#include <optional>

namespace eacgm::node {

int run_reloading(agent::AgentConfig config, const ReloadingTrace& trace, const std::atomic<int>& stop,
                  std::atomic<bool>& reload) {
  while (true) {
    agent::AgentOptions ao = agent::agent_options(trace.request, config);
    ao.capture = trace.consumers.capture;
    // Between traces (a reload) no sample is being added.
    if (trace.consumers.analysis) agent::configure_analysis(*trace.consumers.analysis, trace.request, config);
    auto next = std::make_shared<std::optional<agent::AgentConfig>>();
    ao.should_end = [&trace, &reload, next] {
      if (!reload.exchange(false)) return false;
      auto fresh = trace.reload_config();
      if (!fresh) {
        if (trace.notice) trace.notice("reload failed, keeping the running configuration: " + fresh.error());
        return false;
      }
      *next = std::move(*fresh);
      return true;
    };
    auto agent = agent::Agent::start(std::move(ao), trace.consumers.head, trace.notice);
    if (!agent) {
      if (trace.notice) trace.notice(agent.error());
      return agent::exit_code_for(agent.error_kind());
    }
    (*agent)->run(stop);
    if (stop.load() != 0 || !next->has_value()) return 0;
    if (trace.on_reload) trace.on_reload(config, next->value());
    config = std::move(next->value());
    if (trace.notice) trace.notice("configuration reloaded; tracing restarted");
  }
}

}  // namespace eacgm::node
