// Prometheus exposition format 0.0.4; names follow eacgm_<what>_<unit>.
#include "govern/sched/metrics_text.h"

#include <fmt/format.h>

namespace eacgm::govern::sched {
namespace {

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::string label(const std::string& v) {
  std::string s;
  for (char c : v) {
    if (c == '\\' || c == '"') s += '\\';
    if (c == '\n') {
      s += "\\n";
      continue;
    }
    s += c;
  }
  return s;
}

}  // namespace

std::string render_metrics(const SchedulerConfig& cfg, const std::vector<std::vector<TenantTimes>>& times,
                           const MemoryAccounts& memory,
                           const std::vector<std::pair<std::string, int>>& clients,
                           const ServerCounters& counters) {
  std::string out;
  family(out, "eacgm_govern_tenant_request_ratio", "gauge", "GPU-time share guaranteed to the tenant.");
  for (const TenantConfig& t : cfg.tenants)
    out += fmt::format("eacgm_govern_tenant_request_ratio{{tenant=\"{}\"}} {}\n", label(t.name), t.request);
  family(out, "eacgm_govern_tenant_limit_ratio", "gauge", "GPU-time share the tenant never exceeds.");
  for (const TenantConfig& t : cfg.tenants)
    out += fmt::format("eacgm_govern_tenant_limit_ratio{{tenant=\"{}\"}} {}\n", label(t.name), t.limit);
  family(out, "eacgm_govern_tenant_usage_ratio", "gauge",
         "Share of the GPU's time billed to the tenant over the window.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out += fmt::format("eacgm_govern_tenant_usage_ratio{{tenant=\"{}\",gpu=\"{}\"}} {:.6f}\n",
                         label(t.name), g, t.share);
  family(out, "eacgm_govern_tenant_gpu_time_seconds_total", "counter", "GPU time billed to the tenant.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out += fmt::format("eacgm_govern_tenant_gpu_time_seconds_total{{tenant=\"{}\",gpu=\"{}\"}} {:.6f}\n",
                         label(t.name), g, static_cast<double>(t.busy_total) / 1e6);
  family(out, "eacgm_govern_tenant_tokens_total", "counter", "Time tokens granted to the tenant.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out += fmt::format("eacgm_govern_tenant_tokens_total{{tenant=\"{}\",gpu=\"{}\"}} {}\n", label(t.name),
                         g, t.grants);
  family(out, "eacgm_govern_tenant_token_wait_seconds_total", "counter",
         "Time the tenant's requests waited for a token.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out += fmt::format("eacgm_govern_tenant_token_wait_seconds_total{{tenant=\"{}\",gpu=\"{}\"}} {:.6f}\n",
                         label(t.name), g, static_cast<double>(t.wait_total) / 1e6);
  family(out, "eacgm_govern_tenant_waiting_clients", "gauge",
         "Processes of the tenant waiting for a token now.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out += fmt::format("eacgm_govern_tenant_waiting_clients{{tenant=\"{}\",gpu=\"{}\"}} {}\n",
                         label(t.name), g, t.waiting);
  family(out, "eacgm_govern_tenant_token_held", "gauge", "1 while the tenant holds the GPU's token.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out += fmt::format("eacgm_govern_tenant_token_held{{tenant=\"{}\",gpu=\"{}\"}} {}\n", label(t.name), g,
                         t.holder ? 1 : 0);
  family(out, "eacgm_govern_tenant_memory_used_bytes", "gauge", "GPU memory held by the tenant's processes.");
  for (const TenantConfig& t : cfg.tenants)
    for (int g = 0; g < cfg.gpus; ++g)
      out += fmt::format("eacgm_govern_tenant_memory_used_bytes{{tenant=\"{}\",gpu=\"{}\"}} {}\n",
                         label(t.name), g, memory.used(t.name, g));
  family(out, "eacgm_govern_tenant_memory_limit_bytes", "gauge", "GPU memory limit per GPU (0: none).");
  for (const TenantConfig& t : cfg.tenants)
    out += fmt::format("eacgm_govern_tenant_memory_limit_bytes{{tenant=\"{}\"}} {}\n", label(t.name),
                       t.memory_limit);
  family(out, "eacgm_govern_tenant_clients", "gauge", "Connected processes of the tenant.");
  for (const TenantConfig& t : cfg.tenants) {
    int n = 0;
    for (const auto& [name, count] : clients) n += name == t.name ? count : 0;
    out += fmt::format("eacgm_govern_tenant_clients{{tenant=\"{}\"}} {}\n", label(t.name), n);
  }
  family(out, "eacgm_govern_protocol_errors_total", "counter",
         "Malformed messages received (connection closed).");
  out += fmt::format("eacgm_govern_protocol_errors_total {}\n", counters.protocol_errors);
  family(out, "eacgm_govern_refused_clients_total", "counter",
         "Clients refused (unknown tenant, wrong secret, uid not allowed).");
  out += fmt::format("eacgm_govern_refused_clients_total {}\n", counters.refused_clients);
  family(out, "eacgm_govern_config_reloads_total", "counter", "Config file reloads applied.");
  out += fmt::format("eacgm_govern_config_reloads_total {}\n", counters.reloads);
  family(out, "eacgm_govern_config_reload_errors_total", "counter",
         "Config file reloads refused (file invalid).");
  out += fmt::format("eacgm_govern_config_reload_errors_total {}\n", counters.reload_errors);
  return out;
}

}  // namespace eacgm::govern::sched
