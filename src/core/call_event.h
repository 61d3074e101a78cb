// A decoded traced call: what the ring-buffer record says, with the probe that made it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe_spec.h"

namespace eacgm {

// One attached probe: a spec resolved to one symbol of one library file. Immutable
// once published, so events share it instead of copying names.
struct ProbeInfo {
  std::uint32_t id = 0;  // attach cookie
  std::string function;  // display name (`cudaMalloc`, `aten::gelu`, kernel-less)
  std::string symbol;    // ELF symbol it is attached to
  std::string library;   // library file path
  ProbeSpec spec;        // argument names and kinds, return kind, domain
  // Attached as a counted probe (always-on mode): its calls arrive as counts
  // (core/call_counts.h), never as CallEvents.
  bool counted = false;
  // Counted and not pinned: the budget may attach it only part of the time
  // (agent/duty_cycle.h), and its counts are then scaled estimates.
  bool cycled = false;
  // Counted inside the process by libeacgm_hook.so, not by a uprobe (ingest/hook_calls.h):
  // exact, and costs the process no trap, so the budget leaves it out.
  bool hook = false;
  // Per call, and counted at entry too (always-on: EACGM_PROBE_TALLY): its calls arrive
  // as counts, and its records (CallEvent::tallied) say what each call did.
  bool tallied = false;
};

// What a CUDA graph launch executes (ingest/graph_capture.h): the kernels, memsets and
// copies of its executable graph, grouped by kind, name (kernels) and direction (copies).
struct GraphWorkItem {
  GpuWork kind = GpuWork::kNone;
  std::string name;       // kernels: the kernel's name ("" when unknown)
  std::string direction;  // copies: "HtoD", ...; memsets: ""
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;          // memsets and copies whose size was read
  std::uint64_t unknown_bytes = 0;  // operations whose size could not be read
};
struct GraphWork {
  std::vector<GraphWorkItem> items;
  std::uint64_t nodes = 0;  // kernels + memsets + copies
};

struct CallEvent {
  std::uint64_t ts_ns = 0;   // entry time, ns since the Unix epoch
  std::uint64_t dur_ns = 0;  // 0 for entry-only probes
  // Of dur_ns, the time the thread waited runnable for a CPU (the scheduler's run delay);
  // 0 where unknown (no exit, or a kernel without sched_info).
  std::uint64_t run_delay_ns = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::array<char, 16> comm{};  // NUL-terminated
  std::shared_ptr<const ProbeInfo> probe;
  bool has_exit = false;
  std::int64_t ret = 0;
  std::uint8_t fault_mask = 0;  // bit i: argument i could not be read
  std::uint8_t nargs = 0;
  std::array<std::uint64_t, kMaxArgs> args{};  // dim3: x | y << 32
  std::array<std::uint32_t, kMaxArgs> ext{};   // dim3: z
  std::string str;                             // the (first) string argument, if any
  bool str_truncated = false;
  std::string str2;  // the second string argument (Python: the source file)
  bool str2_truncated = false;
  bool nested = false;  // made inside a call of an `outer` probe on this thread
  // Counted at entry in the kernel (always-on, bpf/events.h EACGM_PROBE_TALLY): the call is
  // counted by its probe's CallCount, so the record says only what the call did.
  bool tallied = false;
  std::string kernel;  // launches: the kernel's name (DerivedArg kKernelName), or ""
  // Recorded into a CUDA graph, not executed: work issued on a capturing stream, or a
  // node added to a graph (ingest/graph_capture.h).
  bool captured = false;
  // Graph launches: what the executable graph holds; null when its making was not seen.
  std::shared_ptr<const GraphWork> graph;
  // The NCCL communicator a call ran on, filled by ingest (ingest/nccl_comms.h) when
  // the communicator's creation was seen; -1 / 0 when unknown.
  std::int32_t nccl_rank = -1;
  std::int32_t nccl_nranks = -1;
  std::uint64_t nccl_comm_id = 0;

  std::string_view comm_view() const { return {comm.data(), ::strnlen(comm.data(), comm.size())}; }
  std::string_view domain() const { return probe ? std::string_view(probe->spec.domain) : ""; }
  std::string_view function() const { return probe ? std::string_view(probe->function) : ""; }

  // A failed call, by its spec's error rule (core/probe_spec.h): a non-zero error code
  // or a null pointer for the catalogs' functions.
  bool is_error() const { return has_exit && probe && is_failure(probe->spec, ret); }
};

}  // namespace eacgm
