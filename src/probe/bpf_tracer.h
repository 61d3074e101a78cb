// The loaded BPF side: the skeleton's lifecycle (open, configure, load, attach),
// the probe table, the target-pid filter and the kernel counters. RAII throughout.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bpf/events.h"
#include "core/call_counts.h"
#include "core/duty_window.h"
#include "core/probe_spec.h"
#include "core/result.h"
#include "core/unique_fd.h"
#include "probe/bpf_link.h"
#include "probe/bpf_preflight.h"
#include "probe/libbpf_log.h"
#include "probe/probe_encoding.h"

struct trace_bpf;
struct ring_buffer;

namespace eacgm::probe {

struct BpfOptions {
  std::uint32_t ringbuf_bytes = 16u << 20;
  std::uint32_t wakeup_bytes = 256u << 10;
  bool filter_pids = false;
  bool stop_on_load = false;    // hold traced processes at loader hints until attached
  bool track_in_flight = true;  // waiting calls kept in calls_in_flight ([hangs] in_flight)
  std::string btf_path;         // custom kernel BTF; empty: /sys/kernel/btf/vmlinux
  // A cgroup v2 directory (an open descriptor): only tasks under it are traced; -1: all.
  int scope_cgroup_fd = -1;
  // Keys of the always-on maps: (process, probe, handle) counts and (process, probe,
  // bucket) durations. Full maps count what they could not keep.
  std::uint32_t count_keys = 32768;
  std::uint32_t duration_keys = 32768;
  // Keys of the count map's spill (allocated at load): where a call is counted when the
  // per-CPU count map cannot take its key (no memory at hand, or full).
  std::uint32_t count_spill_keys = 4096;
};

// Kernel-side counters (bpf/events.h, enum eacgm_counter), summed over CPUs.
struct BpfCounters {
  std::uint64_t ringbuf_drops = 0;
  std::uint64_t lost_exits = 0;
  std::uint64_t orphan_exits = 0;
  std::uint64_t read_faults = 0;
  std::uint64_t no_probe = 0;
  std::uint64_t calls_opened = 0;         // entries waiting for their exit
  std::uint64_t calls_closed = 0;         // of those, completed or given up as lost
  std::uint64_t too_deep = 0;             // entries not traced: too many calls open on a thread
  std::uint64_t exits_before_attach = 0;  // traced threads' exits of calls entered before the attach
  std::uint64_t count_map_full = 0;       // counted calls not kept: the count map and its spill were full
  std::uint64_t count_spilled = 0;        // counted calls kept in the spill: the count map refused their key
  std::uint64_t duration_map_full = 0;    // sampled durations not kept: the duration map was full
  std::uint64_t switch_traps = 0;         // cycled probes' hits while being attached or detached
  std::uint64_t in_flight_full = 0;       // waiting calls not listed in flight: the table was full
};

// One key of the always-on count map, summed over CPUs (cumulative while the process lives).
struct CountEntry {
  eacgm_count_key key{};
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;
  std::uint64_t windowed = 0;   // of the calls, made while the duty window was open
  std::uint64_t switching = 0;  // of the calls, made while the cycled probes were switching
  PaceGaps gaps{};              // the pace's gaps between calls (core/call_counts.h)
};
// One key of the sampled-duration map, summed over CPUs (cumulative).
struct DurationEntry {
  eacgm_duration_key key{};
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;
  std::uint64_t errors = 0;
  std::uint64_t held = 0;  // of them, held off the CPU for at least half their time
  std::uint64_t held_sum_ns = 0;
  std::uint64_t held_delay_ns = 0;  // their waits for a CPU
};

// Attached uprobes (a libbpf link, or a uprobe_multi link fd); detach when destroyed.
class UprobeLink {
 public:
  explicit UprobeLink(BpfLink link) : link_(std::move(link)) {}
  explicit UprobeLink(UniqueFd fd) : fd_(std::move(fd)) {}

 private:
  BpfLink link_;
  UniqueFd fd_;
};

// One probe point of a library file: where, and which probe (the cookie).
struct ProbePoint {
  std::uint64_t file_offset = 0;
  std::uint32_t probe_id = 0;
  std::uint64_t ref_ctr_offset = 0;  // USDT semaphore's file offset; 0: none
};

class BpfTracer {
 public:
  // Checks privileges and BTF first, so failures read as what to do.
  static Result<std::unique_ptr<BpfTracer>> open(const BpfOptions& options);
  ~BpfTracer();
  BpfTracer(const BpfTracer&) = delete;
  BpfTracer& operator=(const BpfTracer&) = delete;

  // Stores a probe's entry (enabled) and zeroes its hit count; `counted`: an always-on
  // probe, attached with attach_session; `cycled`: one the duty cycle switches; `tally`: a
  // per-call probe whose calls are counted at entry too (EACGM_PROBE_TALLY).
  Status set_probe(std::uint32_t id, const ProbeSpec& spec, bool counted = false,
                   std::uint8_t sample_shift = 0, bool cycled = false, bool tally = false);
  // Opens or closes the duty window (bpf/trace.bpf.c duty_window): cycled probes count
  // only while it is open. Open from load.
  Status set_duty_window(DutyWindow state);
  // When process `pid` ended (CLOCK_MONOTONIC ns), if it ended since the trace began
  // and is still remembered (the last 4,096 exits).
  std::optional<std::uint64_t> process_exit_ns(std::uint32_t pid) const;
  // Times one call in 2^shift per CPU of a counted probe.
  Status set_sample_shift(std::uint32_t id, std::uint8_t shift);
  // Mutes or unmutes a stored probe in place (EACGM_PROBE_ENABLED): a muted probe
  // neither records nor counts hits; an open call of it ends unrecorded.
  Status set_probe_enabled(std::uint32_t id, bool enabled);
  // Clears a probe's entry (no flags: nothing fires for it) and its hit count.
  Status clear_probe(std::uint32_t id);
  // Entries of each stored probe while enabled, summed over CPUs (one batch lookup).
  std::map<std::uint32_t, std::uint64_t> probe_hits() const;
  // Adds a process to the filter; `may_stop`: it may be held (SIGSTOP) at loader hints
  // when the tracer was opened with stop_on_load. Its children inherit both.
  Status add_target_pid(std::uint32_t pid, bool may_stop = true);
  // The filter's current pids (followed children included).
  std::vector<std::uint32_t> target_pids() const;
  // Records (true) or counts again (false) the counted probes' calls of `pid`, one call
  // at a time (`capture_pids`, bpf/trace.bpf.c: capture_entry). At most
  // EACGM_MAX_CAPTURES processes at once.
  Status set_capture_pid(std::uint32_t pid, bool captured);
  // CUDA stream captures open now in traced processes (`captures_open`,
  // bpf/trace.bpf.c): while there are some, the work they record must not be missed.
  std::int64_t stream_captures_open() const;

  // Attaches the generic entry (and exit) program at file_offset of path, with the
  // probe id as cookie; a non-zero ref_ctr_offset is a USDT semaphore to raise.
  Result<UprobeLink> attach(const std::string& path, std::uint64_t file_offset, std::uint32_t probe_id,
                            bool exit, std::uint64_t ref_ctr_offset = 0);
  // Whether the kernel takes uprobe_multi links (Linux 6.6+).
  bool has_multi() const { return multi_; }
  // Attaches the generic program at every point of one file with one uprobe_multi link.
  Result<UprobeLink> attach_multi(const std::string& path, const std::vector<ProbePoint>& points, bool exit);
  // Whether the kernel takes uprobe session links (Linux 6.13+): the always-on mode.
  bool has_session() const { return session_; }
  // Attaches the counting session program at every point of one file (one link).
  Result<UprobeLink> attach_session(const std::string& path, const std::vector<ProbePoint>& points);
  // Attaches per-call probes, entries and returns, at every point of one file with one
  // session link: the entry declines the returns it has no use for (an untraced process,
  // a nested call), which then cost no trap. Needs has_session().
  Result<UprobeLink> attach_calls(const std::string& path, const std::vector<ProbePoint>& points);
  // The always-on maps, summed over CPUs; a key's counts are its per-CPU values and what
  // the spill holds of it.
  std::vector<CountEntry> read_counts() const;
  std::vector<DurationEntry> read_durations() const;
  // Whether the last read_counts() and read_durations() saw every key (a batch read that
  // failed midway did not): keys of exited processes are deleted only after one that did.
  bool last_read_complete() const { return last_read_complete_; }
  // Deletes these always-on keys (those of exited processes, after their last read):
  // no walk of the maps.
  void forget_counts(const std::vector<eacgm_count_key>& counts,
                     const std::vector<eacgm_duration_key>& durations);
  // The waiting call of each thread that has made one (bpf/events.h struct
  // eacgm_call_in_flight; ts_ns 0: in none now), in one batch read.
  std::vector<eacgm_call_in_flight> read_calls_in_flight() const;
  // That map: the Python sampler shares it to end its stacks in the call a thread waits
  // in (and benchmarks fill it to time the read).
  int calls_in_flight_fd() const;
  // Attaches a program that does nothing at file_offset of path, to keep the USDT
  // semaphore at ref_ctr_offset raised while the link lives (src/probe/python_usdt.h).
  Result<UprobeLink> attach_semaphore_hold(const std::string& path, std::uint64_t file_offset,
                                           std::uint64_t ref_ctr_offset);
  // Attaches the discovery hint on the dynamic loader's _dl_debug_state.
  Result<UprobeLink> attach_loader_hint(const std::string& path, std::uint64_t file_offset);

  int ringbuf_fd() const;
  // The pid filter's map (filter_pids): other programs may share it to follow the same
  // processes, children included.
  int target_pids_fd() const;
  BpfCounters counters() const;
  // Calls entered but not yet returned (left at shutdown: lost exits); counted,
  // since per-thread state lives in task storage, which cannot be listed.
  std::uint64_t pending_calls() const;

 private:
  BpfTracer() = default;
  static Result<std::unique_ptr<BpfTracer>> open_and_load(const BpfOptions& options, bool multi,
                                                          bool session);
  Status reset_hits(std::uint32_t id);
  // Sets duty_window's state alone (set_duty_window also counts the move).
  Status write_duty_state(DutyWindow state);
  trace_bpf* skel_ = nullptr;
  std::uint32_t duty_moves_ = 0;
  mutable bool last_read_complete_ = true;
  bool multi_ = false;
  bool session_ = false;
  std::vector<BpfLink> tp_links_;
  mutable std::mutex ids_mutex_;
  std::set<std::uint32_t> stored_;  // ids with a probe entry
};

}  // namespace eacgm::probe
