// The agent's counters.
#include "core/agent_counters.h"

#include <array>
#include <string>

namespace eacgm {
namespace {

constexpr auto kC = CounterKind::kCounter;
constexpr auto kG = CounterKind::kGauge;
constexpr auto kAlways = CounterShow::kAlways;
constexpr auto kNonZero = CounterShow::kNonZero;
constexpr auto kGroup = CounterShow::kGroup;
constexpr auto kHidden = CounterShow::kHidden;

constexpr std::array kTable = {
    AgentCounterSpec{"events", "eacgm_events_total", kC, kAlways, "",
                     "Traced calls decoded from the ring buffer (Python calls count their two records)."},
    AgentCounterSpec{"drops", "eacgm_ring_buffer_drops_total", kC, kAlways, "",
                     "Records lost because the ring buffer was full (raise trace.ringbuf_mib)."},
    AgentCounterSpec{
        "lost_exits", "eacgm_lost_exits_total", kC, kAlways, "",
        "Traced calls whose return was never seen (longjmp, thread killed, still open at the end)."},
    AgentCounterSpec{"orphan_exits", "eacgm_orphan_exits_total", kC, kAlways, "",
                     "Returns of traced calls whose entry was seen but not kept (too many calls open on the "
                     "thread)."},
    AgentCounterSpec{"exits_before_attach", "eacgm_exits_before_attach_total", kC, kNonZero, "",
                     "Returns of traced processes' calls that began before the probes were attached (--pid, "
                     "libraries attached while in use); always 0 on kernels with uprobe sessions, where only "
                     "entries seen ask for their return."},
    AgentCounterSpec{"counted_calls", "eacgm_counted_calls_total", kC, kNonZero, "",
                     "Calls of always-on probes, counted at entry in the kernel (no record each)."},
    AgentCounterSpec{"sampled_calls", "eacgm_sampled_calls_total", kC, kNonZero, "",
                     "Of the counted calls, those timed (one in 2^trace.sample_shift per CPU and probe)."},
    AgentCounterSpec{
        "sampled_held_calls", "eacgm_sampled_held_calls_total", kC, kNonZero, "",
        "Of the timed calls, those held off the CPU (runnable, waiting for it) for at least half "
        "their duration: judged apart by the anomaly detector."},
    AgentCounterSpec{"budget_shift_raises", "eacgm_budget_shift_raises_total", kC, kNonZero, "",
                     "Times a counted probe was timed less often to keep a process within trace.budget."},
    AgentCounterSpec{"budget_shift_lowers", "eacgm_budget_shift_lowers_total", kC, kNonZero, "",
                     "Times a reduced probe was timed more often again (every process well within budget)."},
    AgentCounterSpec{"count_keys", "eacgm_count_keys", kG, kHidden, "",
                     "Always-on count keys held (one per process, probe and handle)."},
    AgentCounterSpec{"count_map_full", "eacgm_count_map_full_total", kC, kNonZero, "",
                     "Counted calls not kept because the kernel's count map and its spill were full."},
    AgentCounterSpec{"count_spilled", "eacgm_count_spilled_total", kC, kNonZero, "",
                     "Counted calls kept in the count map's spill: the per-CPU map could not take "
                     "their key (no memory at hand, or full)."},
    AgentCounterSpec{"duration_map_full", "eacgm_duration_map_full_total", kC, kNonZero, "",
                     "Sampled durations not kept because the kernel's duration map was full."},
    AgentCounterSpec{"read_faults", "eacgm_read_faults_total", kC, kAlways, "",
                     "Argument reads that faulted inside the probe (a page not in memory yet); kernel names "
                     "among them are read again from the process's memory (names_from_memory), an argument "
                     "that stays unread is null."},
    AgentCounterSpec{"probes", "eacgm_probes_attached", kG, kAlways, "",
                     "Probes attached now (entry and return count once)."},
    AgentCounterSpec{"libraries", "eacgm_libraries_attached", kG, kAlways, "",
                     "Library files with at least one probe attached now."},
    AgentCounterSpec{"attach_failures", "eacgm_attach_failures_total", kC, kAlways, "",
                     "Uprobes the kernel refused."},
    AgentCounterSpec{"unresolved", "eacgm_unresolved_symbols_total", kC, kAlways, "",
                     "Exact symbols missing from a library that matched a probe's library pattern."},
    AgentCounterSpec{"too_deep", "eacgm_too_deep_total", kC, kNonZero, "",
                     "Calls not traced because too many calls were open on a thread."},
    AgentCounterSpec{"nccl_comm_evictions", "eacgm_nccl_communicator_evictions_total", kC, kNonZero, "",
                     "NCCL communicators forgotten to make room (their later calls lack rank and size)."},
    AgentCounterSpec{"names_from_memory", "eacgm_kernel_names_from_memory_total", kC, kGroup, "names",
                     "Kernel-name strings read again from the traced process's memory."},
    AgentCounterSpec{"names_unreadable", "eacgm_kernel_names_unreadable_total", kC, kGroup, "names",
                     "Kernel-name strings that could not be read (process gone, nothing there)."},
    AgentCounterSpec{"graph_launches", "eacgm_graph_launches_total", kC, kGroup, "graphs",
                     "CUDA graph launches whose executable graph was seen made (capture or nodes, then "
                     "instantiation): their kernels, memsets and copies are counted."},
    AgentCounterSpec{"graph_launches_unknown", "eacgm_graph_launches_unknown_total", kC, kGroup, "graphs",
                     "CUDA graph launches of an executable graph made before tracing began (or beyond the "
                     "per-process cap): their work is not counted."},
    AgentCounterSpec{"captured_calls", "eacgm_captured_calls_total", kC, kGroup, "graphs",
                     "Launches, memsets and copies recorded into a CUDA graph by stream capture (or added "
                     "as graph nodes): counted when the graph is launched, not when recorded."},
    AgentCounterSpec{"python_calls", "eacgm_python_calls_total", kC, kGroup, "python",
                     "Python calls passed on."},
    AgentCounterSpec{"python_unpaired", "eacgm_python_unpaired_total", kC, kGroup, "python",
                     "Python calls passed on without a duration (return without its entry)."},
    AgentCounterSpec{"python_filtered", "eacgm_python_filtered_total", kC, kGroup, "python",
                     "Python calls left out by [python] file_filter."},
    AgentCounterSpec{"python_unreturned", "eacgm_python_unreturned_total", kC, kNonZero, "",
                     "Python entries whose return never came (skipped over by a later return)."},
    AgentCounterSpec{"python_orphan_returns", "eacgm_python_orphan_returns_total", kC, kNonZero, "",
                     "Frame-reading Python returns whose entry was not seen (not reported)."},
    AgentCounterSpec{"py_samples", "eacgm_python_stack_samples_total", kC, kGroup, "pysamples",
                     "Python stacks sampled (on-CPU threads of Python processes) and decoded."},
    AgentCounterSpec{"py_processes", "eacgm_python_processes_sampled", kG, kGroup, "pysamples",
                     "Python processes the stack sampler reads now."},
    AgentCounterSpec{"py_sample_drops", "eacgm_python_stack_samples_dropped_total", kC, kNonZero, "",
                     "Python stack samples lost because the sampler's ring buffer was full."},
    AgentCounterSpec{
        "py_in_calls", "eacgm_python_stack_samples_in_calls_total", kC, kNonZero, "",
        "Python stacks sampled while their thread was inside a traced waiting call (a "
        "synchronization, a blocking copy, an NCCL call): they end in that call's native frame."},
    AgentCounterSpec{"py_codes_unnamed", "eacgm_python_code_objects_unnamed_total", kC, kNonZero, "",
                     "Code objects in sampled Python stacks that could not be read (the process had "
                     "exited, or the object was freed before the read): shown as <code 0x...>."},
    AgentCounterSpec{"py_codes_reread", "eacgm_python_code_objects_reread_total", kC, kNonZero, "",
                     "Code objects read again because a sample's code identity was not the one read at "
                     "that address before, or its instruction lay outside it (it was freed and another "
                     "allocated there)."},
    AgentCounterSpec{"py_stuck_stacks", "eacgm_python_stuck_stacks_read_total", kC, kNonZero, "",
                     "Python stacks read from the memory of threads stuck in a waiting call for [hangs] "
                     "min_age_s (once per call), listed with the call in flight."},
    AgentCounterSpec{"py_stuck_unknown", "eacgm_python_stuck_stacks_unknown_total", kC, kNonZero, "",
                     "Threads stuck in a waiting call of a Python process whose stack could not be told: no "
                     "thread state of theirs (not a Python thread), or CPython 3.10 and older with several "
                     "thread states."},
    AgentCounterSpec{"py_stuck_unreadable", "eacgm_python_stuck_stacks_unreadable_total", kC, kNonZero, "",
                     "Stacks of stuck threads not read because the process's memory could not be read "
                     "(it exited, or reading it was refused)."},
    AgentCounterSpec{"host_waits", "eacgm_host_waits_traced_total", kC, kHidden, "",
                     "Futex and poll-family waits of traced processes timed by the host-wait tracer."},
    AgentCounterSpec{"wait_processes", "eacgm_host_wait_processes", kG, kHidden, "",
                     "Processes whose futex or poll-family waits the host-wait tracer holds now."},
    AgentCounterSpec{"wait_map_full", "eacgm_host_wait_map_full_total", kC, kNonZero, "",
                     "Host waits not kept because the host-wait histogram map was full."},
    AgentCounterSpec{"wait_open_full", "eacgm_host_wait_untimed_total", kC, kNonZero, "",
                     "Host waits not timed because too many threads were waiting at once (32768)."},
    AgentCounterSpec{"calls_in_flight", "eacgm_calls_in_flight", kG, kHidden, "",
                     "Threads inside a waiting call (a synchronisation, a blocking copy, an NCCL call, a "
                     "user probe with waits = true) at the last scan of the kernel's table, of any age."},
    AgentCounterSpec{"in_flight_full", "eacgm_calls_in_flight_unlisted_total", kC, kNonZero, "",
                     "Waiting calls not listed in flight because the kernel's table was full (4096 live "
                     "threads that have made one)."},
    AgentCounterSpec{"malformed", "eacgm_records_malformed_total", kC, kNonZero, "",
                     "Ring-buffer records of a wrong size or type (not decoded)."},
    AgentCounterSpec{"poll_errors", "eacgm_ring_buffer_poll_errors_total", kC, kNonZero, "",
                     "Failed polls of the BPF ring buffer (other than interrupted ones)."},
    AgentCounterSpec{"unknown_probe", "eacgm_records_unknown_probe_total", kC, kNonZero, "",
                     "Records naming a probe that is not (or no longer) attached."},
    AgentCounterSpec{"hints", "eacgm_discovery_hints_total", kC, kHidden, "",
                     "Exec and library-load hints from the kernel."},
    AgentCounterSpec{"forgotten_pids", "eacgm_enricher_processes_forgotten_total", kC, kHidden, "",
                     "Processes whose naming and pairing state was dropped after they exited."},
    AgentCounterSpec{"files_forgotten", "eacgm_library_files_forgotten_total", kC, kHidden, "",
                     "Library files detached and forgotten because no process maps them and they are gone."},
    AgentCounterSpec{"unmatched_probes", "eacgm_unmatched_probes", kG, kNonZero, "",
                     "User probes whose library pattern matches no loaded or cached file (warned at start)."},
    AgentCounterSpec{"duty_switches", "eacgm_probe_duty_switches_total", kC, kNonZero, "",
                     "Attaches and detaches of the duty-cycled probes ([trace] duty_cycle)."},
    AgentCounterSpec{"duty_failures", "eacgm_probe_duty_switch_failures_total", kC, kNonZero, "",
                     "Switches of the duty-cycled probes that failed; a refused attach leaves the window "
                     "closed for that period."},
    AgentCounterSpec{"duty_switch_traps", "eacgm_probe_duty_switch_traps_total", kC, kNonZero, "",
                     "Hits of duty-cycled probes while they were being attached or detached (the kernel "
                     "installs and removes them one by one): traps paid outside the counting windows."},
    AgentCounterSpec{"gpu_passes", "eacgm_gpu_sampling_passes_total", kC, kAlways, "",
                     "NVML sampling passes."},
    AgentCounterSpec{"gpu_skipped", "eacgm_gpu_sampling_skipped_total", kC, kNonZero, "",
                     "Sampling passes skipped because the previous one overran its interval."},
    AgentCounterSpec{"gpu_dropped", "eacgm_gpu_snapshots_dropped_total", kC, kNonZero, "",
                     "GPU snapshots dropped because the output thread fell behind."},
};

}  // namespace

std::span<const AgentCounterSpec> agent_counter_table() { return kTable; }

CounterDef agent_counter(std::string_view key) {
  for (const auto& s : kTable) {
    if (s.key == key) {
      return CounterDef{std::string(s.key),  std::string(s.metric), std::string(s.help), "", s.kind, s.show,
                        std::string(s.group)};
    }
  }
  return CounterDef{std::string(key),     "", "not in the agent counter table", "", CounterKind::kCounter,
                    CounterShow::kHidden, ""};
}

}  // namespace eacgm
