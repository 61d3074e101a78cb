// Prometheus exposition format 0.0.4 through the agent's writer (core/prometheus_text.h);
// names follow eacgm_<what>_<unit>.
#include "govern/sched/metrics_text.h"

#include <string_view>

#include "core/prometheus_text.h"

namespace eacgm::govern::sched {
namespace {

// Times and shares keep the six decimals (microseconds) the scheduler has always written.
constexpr int kDecimals = 6;

Labels tenant_labels(const std::string& tenant) { return {{"tenant", tenant}}; }
Labels tenant_gpu_labels(const std::string& tenant, std::size_t gpu) {
  return {{"tenant", tenant}, {"gpu", std::to_string(gpu)}};
}

void family(ExpositionWriter& out, std::string_view name, MetricType type, std::string_view help) {
  out.begin_family({name, type, help, ""});
}

// The per-GPU families: one sample per (tenant, GPU) from the GPUs' schedulers.
void write_times(ExpositionWriter& out, const std::vector<std::vector<TenantTimes>>& times) {
  using enum MetricType;
  family(out, "eacgm_govern_tenant_usage_ratio", kGauge,
         "Share of the GPU's time billed to the tenant over the window.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g]) out.add_fixed(tenant_gpu_labels(t.name, g), t.share, kDecimals);
  family(out, "eacgm_govern_tenant_gpu_time_seconds_total", kCounter, "GPU time billed to the tenant.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out.add_fixed(tenant_gpu_labels(t.name, g), static_cast<double>(t.busy_total) / 1e6, kDecimals);
  family(out, "eacgm_govern_tenant_tokens_total", kCounter, "Time tokens granted to the tenant.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g]) out.add(tenant_gpu_labels(t.name, g), t.grants);
  family(out, "eacgm_govern_tenant_token_wait_seconds_total", kCounter,
         "Time the tenant's requests waited for a token.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out.add_fixed(tenant_gpu_labels(t.name, g), static_cast<double>(t.wait_total) / 1e6, kDecimals);
  family(out, "eacgm_govern_tenant_waiting_clients", kGauge,
         "Processes of the tenant waiting for a token now.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out.add(tenant_gpu_labels(t.name, g), static_cast<std::uint64_t>(t.waiting));
  family(out, "eacgm_govern_tenant_token_held", kGauge, "1 while the tenant holds the GPU's token.");
  for (std::size_t g = 0; g < times.size(); ++g)
    for (const TenantTimes& t : times[g])
      out.add(tenant_gpu_labels(t.name, g), std::uint64_t{t.holder ? 1u : 0u});
}

}  // namespace

std::string render_metrics(const SchedulerConfig& cfg, const std::vector<std::vector<TenantTimes>>& times,
                           const MemoryAccounts& memory,
                           const std::vector<std::pair<std::string, int>>& clients,
                           const ServerCounters& counters) {
  using enum MetricType;
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  family(out, "eacgm_govern_tenant_request_ratio", kGauge, "GPU-time share guaranteed to the tenant.");
  for (const TenantConfig& t : cfg.tenants) out.add(tenant_labels(t.name), t.request);
  family(out, "eacgm_govern_tenant_limit_ratio", kGauge, "GPU-time share the tenant never exceeds.");
  for (const TenantConfig& t : cfg.tenants) out.add(tenant_labels(t.name), t.limit);
  write_times(out, times);
  family(out, "eacgm_govern_tenant_memory_used_bytes", kGauge, "GPU memory held by the tenant's processes.");
  for (const TenantConfig& t : cfg.tenants)
    for (int g = 0; g < cfg.gpus; ++g)
      out.add(tenant_gpu_labels(t.name, static_cast<std::size_t>(g)), memory.used(t.name, g));
  family(out, "eacgm_govern_tenant_memory_limit_bytes", kGauge, "GPU memory limit per GPU (0: none).");
  for (const TenantConfig& t : cfg.tenants) out.add(tenant_labels(t.name), t.memory_limit);
  family(out, "eacgm_govern_tenant_clients", kGauge, "Connected processes of the tenant.");
  for (const TenantConfig& t : cfg.tenants) {
    std::uint64_t n = 0;
    for (const auto& [name, count] : clients) n += name == t.name ? static_cast<std::uint64_t>(count) : 0;
    out.add(tenant_labels(t.name), n);
  }
  family(out, "eacgm_govern_protocol_errors_total", kCounter,
         "Malformed messages received (connection closed).");
  out.add({}, counters.protocol_errors);
  family(out, "eacgm_govern_refused_clients_total", kCounter,
         "Clients refused (unknown tenant, wrong secret, uid not allowed).");
  out.add({}, counters.refused_clients);
  family(out, "eacgm_govern_config_reloads_total", kCounter, "Config file reloads applied.");
  out.add({}, counters.reloads);
  family(out, "eacgm_govern_config_reload_errors_total", kCounter,
         "Config file reloads refused (file invalid).");
  out.add({}, counters.reload_errors);
  return out.finish();
}

}  // namespace eacgm::govern::sched
