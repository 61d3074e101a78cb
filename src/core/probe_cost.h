// The probes' cost as the budget controller sees it each tick: what one hit costs on
// this machine (calibrated), and per traced process the estimated time its probes took
// against the CPU time it used, with what the controller did about it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm {

// Nanoseconds added to the traced thread per call, each measured against the same
// function unprobed.
struct TrapCosts {
  double entry_ns = 0;          // always-on: counted at entry, return declined (one trap)
  double entry_return_ns = 0;   // always-on: a sampled call (entry and return)
  double stepped_entry_ns = 0;  // an entry on an instruction the kernel single-steps
  double per_call_ns = 0;       // per-call mode: entry, return and a ring-buffer record
  bool session = false;         // measured through session links (Linux 6.13+)
  bool measured = false;        // false: not calibrated (costs are zero)
};

struct ProcessOverhead {
  std::uint32_t pid = 0;
  bool exited = false;  // its last report: totals are final
  // The last interval (about a second).
  std::uint64_t counted_calls = 0;    // entry traps of counted probes
  std::uint64_t sampled_returns = 0;  // of them, timed (a return trap too)
  std::uint64_t per_call_records = 0;
  double estimated_ns = 0;  // the probes' time in the process
  double cpu_ns = 0;        // the process's CPU time (utime + stime)
  // Since the process was first seen.
  double total_estimated_ns = 0;
  double total_cpu_ns = 0;
  // estimated / (cpu - estimated): the slowdown of the process's own work, over the
  // window the controller decides on (a few seconds).
  double ratio = 0;
  // Measured by the duty cycle: how much slower the process goes while the cycled
  // probes are attached (its calls to probes attached throughout, inside the windows
  // against outside); unset until it has cycled long enough.
  std::optional<double> measured_slowdown = std::nullopt;
};

struct OverheadReport {
  TrapCosts costs;
  double budget = 0;  // the allowed ratio per process (0.01: 1%)
  std::vector<ProcessOverhead> processes;
  std::uint32_t over_budget = 0;      // processes over the budget now
  std::uint32_t at_entry_floor = 0;   // of them, over it on entry traps alone
  std::uint32_t reduced_probes = 0;   // counted probes timed less often than configured
  std::uint32_t pinned_probes = 0;    // timed probes the budget leaves as they are
  std::uint8_t max_sample_shift = 0;  // the sparsest timing in use: 1 call in 2^shift
  // The duty cycle (agent/duty_cycle.h): the share of each period the cycled probes
  // are attached now (1: always, their counts exact), and the share of the trace so far
  // they were (below 1: some of their counts are scaled estimates).
  double duty_fraction = 1.0;
  double attached_share = 1.0;
};

}  // namespace eacgm
