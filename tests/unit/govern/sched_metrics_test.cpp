// The scheduler's /metrics text, byte for byte: the families, their order, label
// escaping and the six decimals of its times and shares.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "govern/sched/metrics_text.h"

namespace eacgm::govern::sched {
namespace {

TEST(SchedMetrics, WritesEveryFamilyInOrder) {
  SchedulerConfig cfg;
  cfg.gpus = 2;
  TenantConfig a;
  a.name = "train";
  a.request = 0.5;
  a.limit = 1;
  a.memory_limit = std::uint64_t{4} << 30;
  TenantConfig b;
  b.name = "odd \"name\"\\x\ny";
  b.request = 0.125;
  b.limit = 0.75;
  cfg.tenants = {a, b};
  MemoryAccounts memory;
  memory.reserve(1, "train", 1, 1u << 20, a.memory_limit);
  std::vector<std::vector<TenantTimes>> times(2);
  times[0].push_back({"train", 0.25, 1'500'000, 20'000, 7, 1, true});
  times[0].push_back({b.name, 1.0 / 3, 2, 0, 0, 0, false});
  times[1].push_back({"train", 0, 0, 0, 0, 0, false});
  const std::vector<std::pair<std::string, int>> clients = {{"train", 2}, {"other", 5}, {"train", 1}};
  const ServerCounters counters{3, 1, 2, 0};
  const std::string text = render_metrics(cfg, times, memory, clients, counters);
  EXPECT_EQ(text, R"(# HELP eacgm_govern_tenant_request_ratio GPU-time share guaranteed to the tenant.
# TYPE eacgm_govern_tenant_request_ratio gauge
eacgm_govern_tenant_request_ratio{tenant="train"} 0.5
eacgm_govern_tenant_request_ratio{tenant="odd \"name\"\\x\ny"} 0.125
# HELP eacgm_govern_tenant_limit_ratio GPU-time share the tenant never exceeds.
# TYPE eacgm_govern_tenant_limit_ratio gauge
eacgm_govern_tenant_limit_ratio{tenant="train"} 1
eacgm_govern_tenant_limit_ratio{tenant="odd \"name\"\\x\ny"} 0.75
# HELP eacgm_govern_tenant_usage_ratio Share of the GPU's time billed to the tenant over the window.
# TYPE eacgm_govern_tenant_usage_ratio gauge
eacgm_govern_tenant_usage_ratio{tenant="train",gpu="0"} 0.250000
eacgm_govern_tenant_usage_ratio{tenant="odd \"name\"\\x\ny",gpu="0"} 0.333333
eacgm_govern_tenant_usage_ratio{tenant="train",gpu="1"} 0.000000
# HELP eacgm_govern_tenant_gpu_time_seconds_total GPU time billed to the tenant.
# TYPE eacgm_govern_tenant_gpu_time_seconds_total counter
eacgm_govern_tenant_gpu_time_seconds_total{tenant="train",gpu="0"} 1.500000
eacgm_govern_tenant_gpu_time_seconds_total{tenant="odd \"name\"\\x\ny",gpu="0"} 0.000002
eacgm_govern_tenant_gpu_time_seconds_total{tenant="train",gpu="1"} 0.000000
# HELP eacgm_govern_tenant_tokens_total Time tokens granted to the tenant.
# TYPE eacgm_govern_tenant_tokens_total counter
eacgm_govern_tenant_tokens_total{tenant="train",gpu="0"} 7
eacgm_govern_tenant_tokens_total{tenant="odd \"name\"\\x\ny",gpu="0"} 0
eacgm_govern_tenant_tokens_total{tenant="train",gpu="1"} 0
# HELP eacgm_govern_tenant_token_wait_seconds_total Time the tenant's requests waited for a token.
# TYPE eacgm_govern_tenant_token_wait_seconds_total counter
eacgm_govern_tenant_token_wait_seconds_total{tenant="train",gpu="0"} 0.020000
eacgm_govern_tenant_token_wait_seconds_total{tenant="odd \"name\"\\x\ny",gpu="0"} 0.000000
eacgm_govern_tenant_token_wait_seconds_total{tenant="train",gpu="1"} 0.000000
# HELP eacgm_govern_tenant_waiting_clients Processes of the tenant waiting for a token now.
# TYPE eacgm_govern_tenant_waiting_clients gauge
eacgm_govern_tenant_waiting_clients{tenant="train",gpu="0"} 1
eacgm_govern_tenant_waiting_clients{tenant="odd \"name\"\\x\ny",gpu="0"} 0
eacgm_govern_tenant_waiting_clients{tenant="train",gpu="1"} 0
# HELP eacgm_govern_tenant_token_held 1 while the tenant holds the GPU's token.
# TYPE eacgm_govern_tenant_token_held gauge
eacgm_govern_tenant_token_held{tenant="train",gpu="0"} 1
eacgm_govern_tenant_token_held{tenant="odd \"name\"\\x\ny",gpu="0"} 0
eacgm_govern_tenant_token_held{tenant="train",gpu="1"} 0
# HELP eacgm_govern_tenant_memory_used_bytes GPU memory held by the tenant's processes.
# TYPE eacgm_govern_tenant_memory_used_bytes gauge
eacgm_govern_tenant_memory_used_bytes{tenant="train",gpu="0"} 0
eacgm_govern_tenant_memory_used_bytes{tenant="train",gpu="1"} 1048576
eacgm_govern_tenant_memory_used_bytes{tenant="odd \"name\"\\x\ny",gpu="0"} 0
eacgm_govern_tenant_memory_used_bytes{tenant="odd \"name\"\\x\ny",gpu="1"} 0
# HELP eacgm_govern_tenant_memory_limit_bytes GPU memory limit per GPU (0: none).
# TYPE eacgm_govern_tenant_memory_limit_bytes gauge
eacgm_govern_tenant_memory_limit_bytes{tenant="train"} 4294967296
eacgm_govern_tenant_memory_limit_bytes{tenant="odd \"name\"\\x\ny"} 0
# HELP eacgm_govern_tenant_clients Connected processes of the tenant.
# TYPE eacgm_govern_tenant_clients gauge
eacgm_govern_tenant_clients{tenant="train"} 3
eacgm_govern_tenant_clients{tenant="odd \"name\"\\x\ny"} 0
# HELP eacgm_govern_protocol_errors_total Malformed messages received (connection closed).
# TYPE eacgm_govern_protocol_errors_total counter
eacgm_govern_protocol_errors_total 3
# HELP eacgm_govern_refused_clients_total Clients refused (unknown tenant, wrong secret, uid not allowed).
# TYPE eacgm_govern_refused_clients_total counter
eacgm_govern_refused_clients_total 1
# HELP eacgm_govern_config_reloads_total Config file reloads applied.
# TYPE eacgm_govern_config_reloads_total counter
eacgm_govern_config_reloads_total 2
# HELP eacgm_govern_config_reload_errors_total Config file reloads refused (file invalid).
# TYPE eacgm_govern_config_reload_errors_total counter
eacgm_govern_config_reload_errors_total 0
)");
}

TEST(SchedMetrics, NoTenantsLeavesOnlyTheServerCounters) {
  const std::string text = render_metrics(SchedulerConfig{}, {}, MemoryAccounts{}, {}, ServerCounters{});
  EXPECT_EQ(text.find("eacgm_govern_tenant_"), std::string::npos);
  EXPECT_NE(text.find("eacgm_govern_protocol_errors_total 0\n"), std::string::npos);
  EXPECT_NE(text.find("eacgm_govern_config_reload_errors_total 0\n"), std::string::npos);
}

}  // namespace
}  // namespace eacgm::govern::sched
