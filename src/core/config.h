// The configuration model: everything `--config FILE` can set, with embedded defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/probe_spec.h"

namespace eacgm {

// How calls are seen (docs/overhead.md): per call (a record each, paired entry and exit)
// or always-on (counted at entry, one trap per call, durations sampled).
enum class TraceMode : std::uint8_t { kPerCall, kAlwaysOn };

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
  std::uint32_t ringbuf_mib = 16;       // BPF ring buffer size (power of two)
  std::uint32_t wakeup_kib = 256;       // wake the reader once this much is queued
  std::uint32_t poll_timeout_ms = 100;  // latest delivery of a queued record
  double rescan_interval_s = 1.0;       // /proc/*/maps rescan for new libraries
  double status_interval_s = 5.0;       // text-format status lines
};

struct GpuConfig {
  double interval_s = 1.0;  // NVML sampling period
  // `trace` and `run` also sample the GPUs (device-wide, and the traced processes);
  // without NVML they trace on with a notice.
  bool sample = true;
};

struct PythonConfig {
  // Glob (fnmatch) on the source file path of reported Python calls; "" reports all.
  // Applied in user space: the probes still fire for every Python call.
  std::string file_filter;
  // Python stack sampling (`eacgm run`, `eacgm serve`; `eacgm trace --folded`): samples
  // per second on each CPU while a traced Python thread is on it (0: none). A prime, so
  // samples do not lock onto timer ticks.
  std::uint32_t sample_hz = 99;
  // `eacgm serve`'s profile: the samples of about the last window_s seconds (it moves in
  // steps of a fifth), and at most max_rows thread, function and line keys and
  // max_stacks distinct stacks in it (`run` keeps the whole run under the same caps).
  std::uint32_t window_s = 300;
  std::uint32_t max_rows = 100000;
  std::uint32_t max_stacks = 20000;
  // CPython 3.11 with USDT probes fires function__entry only while its line probe's
  // semaphore is raised (probe/python_usdt.h). true: eacgm raises it, so calls get
  // durations, and the interpreter runs its slower tracing dispatch meanwhile; false:
  // exact counts without durations.
  bool usdt_durations = true;
};

// `eacgm serve`: where it listens and what it serves (flags override these).
struct ServeConfig {
  std::string listen = "127.0.0.1:9977";     // HOST:PORT; not loopback needs a token file
  std::string token_file;                    // bearer token, mode 0600; "" none
  std::uint32_t max_clients = 8;             // connections served at once
  bool dcgm_metrics = true;                  // DCGM_FI_* families on /metrics
  std::uint32_t max_function_series = 2000;  // (domain, function) series; the rest as "other"
  std::uint32_t max_process_series = 500;
  std::uint32_t max_histogram_series = 200;
  // The daemon finds new processes and libraries through exec and loader hints; its
  // periodic /proc rescan (trace.rescan_interval_s for trace/run) is only the fallback.
  double rescan_interval_s = 10.0;  // duration histograms: the functions with the most time   //
                                    // processes on /metrics and the API; the rest folded
};

// The waiting calls in flight and the hangs (`[hangs]`): from what age a call is listed,
// and from what age it is a hang whatever it waits for.
struct HangsConfig {
  // A waiting call in flight is listed (/api/v1/inflight, `run --json`, the in-flight
  // metrics) once it is at least this old, in seconds; a communicator's open collective
  // too, for the hang diagnosis.
  double min_age_s = 5.0;
  // A call in flight this long is a hang (0: only the communicator rule says hangs).
  double hang_after_s = 600.0;
  // false: waiting calls are not kept in the kernel's table (no calls in flight, no
  // hangs, no Python stacks ending in a waiting call); the cost benchmark's switch.
  bool in_flight = true;
};

// [store]: the history `serve` keeps (docs/history.md).
struct StoreConfig {
  std::string url;           // "" : the default (sqlite:/var/lib/eacgm/eacgm.db); "off": none
  std::string node;          // every row's node; "" : the host name
  double interval_s = 10.0;  // one batch of rows each
  double raw_hours = 24.0;   // the intervals themselves
  double minute_days = 7.0;  // 1-minute rollups
  double hour_days = 90.0;   // 1-hour rollups, anomalies, leaks and processes
  std::uint64_t max_bytes = std::uint64_t{1} << 30;  // the store's size cap; 0 none
  std::uint32_t spool_batches = 360;                 // batches kept while the store is away
};

// [kubernetes]: naming the pods of traced processes (docs/kubernetes.md). A process's pod
// UID and container id come from its cgroup path whatever this says; names and GPU
// assignment from the kubelet's pod-resources socket and log directories.
struct KubernetesConfig {
  bool enabled = true;  // false: no kubelet is asked, pods keep their UIDs only
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string log_root = "/var/log";  // its pods/ and containers/ name pods and containers
  double refresh_s = 30.0;            // both read again this often (and on an unknown pod)
  // /metrics: per-process series of processes in a named pod carry pod labels instead of
  // pid and comm, summed per container ("auto": so whenever pods are named; "pid": pid
  // labels always, with pod labels added).
  std::string process_series = "auto";
  bool operator==(const KubernetesConfig&) const = default;
};

struct Config {
  TraceConfig trace;
  GpuConfig gpu;
  PythonConfig python;
  ServeConfig serve;
  HangsConfig hangs;
  StoreConfig store;
  KubernetesConfig kubernetes;
  std::vector<std::string> catalogs;  // enabled built-in catalogs (empty: defaults)
  std::vector<ProbeSpec> probes;      // user-defined probe specs
};

}  // namespace eacgm
