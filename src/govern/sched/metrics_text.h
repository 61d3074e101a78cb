// The scheduler's Prometheus text: per tenant and GPU, its share of GPU time over the
// window, time billed, tokens, waiting, and memory against its limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "govern/sched/memory_accounts.h"
#include "govern/sched/tenant_config.h"
#include "govern/sched/token_scheduler.h"

namespace eacgm::govern::sched {

struct ServerCounters {
  std::uint64_t protocol_errors = 0;
  std::uint64_t refused_clients = 0;
  std::uint64_t reloads = 0;
  std::uint64_t reload_errors = 0;
};

// `times[g]` is GPU g's scheduler's view; `clients[t]` the connected processes per tenant.
std::string render_metrics(const SchedulerConfig& cfg, const std::vector<std::vector<TenantTimes>>& times,
                           const MemoryAccounts& memory,
                           const std::vector<std::pair<std::string, int>>& clients,
                           const ServerCounters& counters);

}  // namespace eacgm::govern::sched
