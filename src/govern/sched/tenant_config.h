// The scheduler's configuration file (TOML, docs/governance.md "Scheduler config"): how
// it listens, its window and slices, and the tenants with their shares and limits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace eacgm::govern::sched {

struct TenantConfig {
  std::string name;
  double request = 0;               // GPU-time share guaranteed (0..1)
  double limit = 1;                 // GPU-time share never exceeded (request..1)
  std::uint64_t memory_limit = 0;   // bytes per GPU, all its processes together; 0: none
  std::vector<std::uint32_t> uids;  // local users who may claim it; empty: any
  std::string secret;               // required over TCP
};

struct SchedulerConfig {
  int gpus = 1;
  std::string socket = "/run/eacgm/sched.sock";
  std::string tcp;                         // "host:port"; empty: no TCP
  std::string metrics = "127.0.0.1:9477";  // empty: no metrics endpoint
  double window_seconds = 10.0;
  std::uint32_t max_slice_ms = 30;
  std::uint32_t min_slice_ms = 2;
  std::vector<TenantConfig> tenants;
};

// Parses the text; errors name source:line:column and what to change. Unknown keys are
// errors.
Result<SchedulerConfig> parse_scheduler_config(std::string_view text, std::string_view source_name);
Result<SchedulerConfig> load_scheduler_config(const std::string& path);

}  // namespace eacgm::govern::sched
