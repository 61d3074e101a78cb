// Environment: what the analyses ask of the machine (the clocks, whether a process or
// thread is alive, when a process started) and of the fleet (the other nodes' rows of the
// shared store, as the history writer last read them), one object owned by the hub and
// read through by every analysis, so that a test replaces it once for all of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace eacgm::analysis {

struct FleetReports;

struct Environment {
  std::function<std::chrono::system_clock::time_point()> wall;
  std::function<std::chrono::steady_clock::time_point()> steady;
  std::function<bool(std::uint32_t pid)> process_alive;
  std::function<bool(std::uint32_t pid, std::uint32_t tid)> thread_alive;
  std::function<std::optional<std::chrono::steady_clock::time_point>(std::uint32_t pid)> process_start;
  // The job's NCCL ranks on every node as the shared store last held them (nullptr: not
  // read yet); unset without a store (analysis/job_verdict.h). Any thread may publish them.
  std::function<std::shared_ptr<const FleetReports>()> fleet_reports;

  // The machine's: the system's clocks and /proc.
  static Environment machine();
};

}  // namespace eacgm::analysis
