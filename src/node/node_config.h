// The configuration file whole (docs/config.md): the agent's sections and the node's own
// ([serve], [store], [report], [kubernetes]), each parsed by the stage that owns it. The commands,
// the daemon and the Python module load it here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/agent_config.h"
#include "core/result.h"
#include "history/report_config.h"
#include "history/store_config.h"
#include "sample/kubernetes_config.h"
#include "server/serve_config.h"

namespace eacgm::node {

struct NodeConfig {
  agent::AgentConfig agent;             // [trace], [gpu], [python], [hangs], catalogs, [[probe]]
  server::ServeConfig serve;            // [serve]
  history::StoreConfig store;           // [store]
  history::ReportOptions report;        // [report]
  sample::KubernetesConfig kubernetes;  // [kubernetes]
};

// Parses config text; `source` (usually the file's path) begins every message. A text
// without sections yields the defaults.
Result<NodeConfig> parse_config(std::string_view text, std::string_view source);

// The embedded defaults when `path` is empty (no --config given), else the file parsed
// ("cannot read config PATH: <reason>" when it cannot be read).
Result<NodeConfig> load_config(const std::string& path);

// load_config, and every probe the file and `probes` name exists (else a usage error):
// what a daemon checks before a new file replaces the running one.
Result<NodeConfig> load_checked_config(const std::string& path, const std::vector<std::string>& probes);

// The agent's part as a daemon (`serve`, top's own agent) runs it: [serve]
// rescan_interval_s in place of [trace]'s, since the daemon finds new processes through
// exec and loader hints and its /proc rescan is only the fallback.
agent::AgentConfig daemon_agent_config(NodeConfig config);

// What a reload from `before` to `after` changed that a running node applies only at its
// next start, one line each ("reload: [kubernetes] applies at the next start").
std::vector<std::string> next_start_changes(const NodeConfig& before, const NodeConfig& after);

}  // namespace eacgm::node
