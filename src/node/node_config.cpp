// The file's sections, each handed to the stage that reads it, in the order an unknown
// top-level key's message lists them.
#include "node/node_config.h"

#include <utility>

#include "core/config_reader.h"
#include "probe/probe_config.h"

namespace eacgm::node {
namespace {

void add_sections(ConfigSections& sections, NodeConfig& config, probe::CatalogNames& catalogs) {
  probe::add_catalogs_section(sections, catalogs);
  ingest::add_trace_section(sections, config.agent.trace);
  sample::add_gpu_section(sections, config.agent.gpu);
  agent::add_python_section(sections, config.agent.python);
  probe::add_probe_section(sections, config.agent.probes);
  server::add_serve_section(sections, config.serve);
  agent::add_hangs_section(sections, config.agent.hangs);
  agent::add_nccl_section(sections, config.agent.nccl);
  history::add_store_section(sections, config.store);
  history::add_report_section(sections, config.report);
  sample::add_kubernetes_section(sections, config.kubernetes);
}

// The file read by `read` (text or path), then the names `catalogs` gives checked against
// its [[probe]]s.
template <class Read>
Result<NodeConfig> read_config(Read read) {
  NodeConfig config;
  probe::CatalogNames catalogs;
  ConfigSections sections;
  add_sections(sections, config, catalogs);
  if (auto s = read(sections); !s) return std::move(s).take_error();
  if (auto s = probe::check_catalog_names(catalogs, config.agent.probes); !s)
    return std::move(s).take_error();
  config.agent.catalogs = std::move(catalogs.names);
  return config;
}

}  // namespace

Result<NodeConfig> parse_config(std::string_view text, std::string_view source) {
  return read_config([&](const ConfigSections& sections) { return sections.read(text, source); });
}

Result<NodeConfig> load_config(const std::string& path) {
  if (path.empty()) return NodeConfig{};
  return read_config([&](const ConfigSections& sections) { return sections.read_file(path); });
}

Result<NodeConfig> load_checked_config(const std::string& path, const std::vector<std::string>& probes) {
  auto config = load_config(path);
  if (!config) return config;
  if (auto specs = agent::select_probe_specs(config->agent, probes); !specs)
    return std::move(specs).take_error();
  return config;
}

agent::AgentConfig daemon_agent_config(NodeConfig config) {
  config.agent.trace.rescan_interval_s = config.serve.rescan_interval_s;
  return std::move(config.agent);
}

std::vector<std::string> next_start_changes(const NodeConfig& before, const NodeConfig& after) {
  std::vector<std::string> lines;
  if (after.store.url != before.store.url || after.store.node != before.store.node ||
      after.store.fleet_url != before.store.fleet_url) {
    lines.emplace_back("reload: [store] url, node and fleet_url apply at the next start");
  }
  if (after.kubernetes != before.kubernetes)
    lines.emplace_back("reload: [kubernetes] applies at the next start");
  if (after.serve.listen != before.serve.listen || after.serve.token_file != before.serve.token_file) {
    lines.emplace_back("reload: [serve] listen and token_file apply at the next start");
  }
  return lines;
}

}  // namespace eacgm::node
