// [trace]: how the session traces (mode, ring buffer, wakeups, rescans) and the always-on
// budget's settings, with their defaults (docs/config.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/trace_mode.h"

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::ingest {

struct TraceConfig {
  // Unset: the command's default (always-on for `run` and `serve`, per call for `trace`).
  std::optional<TraceMode> mode;
  // Always-on: time one call in 2^sample_shift per CPU of each counted probe.
  std::uint32_t sample_shift = 4;
  // Always-on: the probes' estimated cost allowed per traced process, as a fraction of
  // its CPU time (0.01: 1%); over it, hot probes are timed less often. 0: no control.
  double budget = 0.01;
  // Measure the cost of one probe hit at start (probe/trap_calibration.h).
  bool calibrate = true;
  // Always-on: probes (function or spec names) whose sample rate the budget never
  // changes: they stay timed at `sample_shift` whatever they cost.
  std::vector<std::string> pinned;
  // Always-on: when a process is over budget on its entry traps alone, attach the
  // counted probes that are not pinned for only part of the time and scale their
  // counts (estimates, with their error). The probes of a library are switched for every
  // process that maps it (docs/overhead.md, "Duty cycle"); false: counts stay exact
  // whatever they cost.
  bool duty_cycle = true;
  // Always-on, for measuring the duty cycle (docs/overhead.md, "Measuring it"; the
  // environment's EACGM_DUTY_FRACTION, EACGM_DUTY_SWITCHES and EACGM_DUTY_LOG override
  // them): a fraction in (0, 1] the cycle is held at whatever the budget asks (unset:
  // the budget's); a file that gets a line per switch of the cycled probes; a file that
  // gets a line per process and interval whose counts were scaled ("": none).
  std::optional<double> duty_fraction;
  std::string duty_switch_log;
  std::string duty_log;
  // Per call: trace one layer per operation, as always-on does: launches, copies, memsets
  // and synchronisations at the driver's probes (`cuLaunchKernel`), where the driver
  // catalog is probed, and not the runtime's calls that reach them (`cudaLaunchKernel`):
  // one trap less per operation (docs/overhead.md, "One layer per operation").
  bool one_layer = false;
  // Time the traced processes' futex and poll-family waits (syscall tracepoints) beside
  // their synchronizing calls (docs/report.md, "Host waits"). Unset: the command's
  // default, on for `run`, off for `serve` (the tracepoints cost every system call of the
  // machine, docs/overhead.md).
  std::optional<bool> host_waits;
  // Trace only the processes under this cgroup v2 path ("/node-a", or its directory
  // "/sys/fs/cgroup/node-a"), children that move in later included; "": every process.
  std::string cgroup;
  std::uint32_t ringbuf_mib = 16;       // BPF ring buffer size (power of two)
  std::uint32_t wakeup_kib = 256;       // wake the reader once this much is queued
  std::uint32_t poll_timeout_ms = 100;  // latest delivery of a queued record
  std::uint32_t count_keys = 32768;     // always-on: keys of the kernel's per-CPU count map
  double rescan_interval_s = 1.0;       // /proc/*/maps rescan for new libraries
  double status_interval_s = 5.0;       // text-format status lines
};

// Adds [trace] to the file's sections, read into `trace`.
void add_trace_section(ConfigSections& sections, TraceConfig& trace);

}  // namespace eacgm::ingest
