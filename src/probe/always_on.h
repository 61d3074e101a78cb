// The always-on mode's probe set: which built-in probes are counted at entry, which
// stay per call, and which are left out because another layer sees the same operation.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/call_event.h"
#include "core/host_wait_kinds.h"
#include "core/probe_spec.h"
#include "core/trace_mode.h"

namespace eacgm::probe {

// The role of a built-in spec in always-on mode (ProbeSpec::always_on):
// - per call: what the analysis needs call by call: allocations and frees (the memory
//   ledger's addresses), kernel naming (registration, module and library lookups),
//   NCCL (communicators, per-call skew), CUDA graphs (capture, nodes, launches),
//   Python frames and USDT pairs;
// - skip: runtime launches, copies, memsets and synchronisations, which
//   always reach the driver's probe of the same operation (one layer per operation;
//   counted at the runtime only while that probe is not attached: specs_for_mode);
// - count: everything else.
AlwaysOn always_on_role(const ProbeSpec& spec);

// Counted probes whose every call is timed (sample shift 0) whatever the sampling rate:
// the host-blocking calls (stream, event, context/device synchronisations, synchronous
// copies: core/host_wait_kinds.h), whose durations are the time a process waits for its
// GPU work. They are called a few times per step, so timing each costs little, a slow
// one is never missed by sampling, and their returns clear the thread's waiting mark
// (waits_in_calls) anyway.
bool times_every_call(const ProbeSpec& spec);

// Probes the budget leaves as they are (never timed less often, never detached): the
// user's `[trace] pinned` (function or spec names) and those timed at every call.
bool pinned_probe(const ProbeInfo& probe, const std::set<std::string>& pinned);

// Counted probes the budget's duty cycle may detach part of the time (agent/duty_cycle.h):
// those of GPU work (launches, asynchronous copies and memsets), which a training step
// makes once per kernel, not pinned. The other counted probes (events, queries, context
// and device calls) stay attached and exact: a step makes few of their calls, and the
// kernel installs and removes probes one by one, so each one cycled costs every period
// (on a PyTorch process, about 2 ms to remove). A runtime probe standing in for the
// driver's (`until_driver`) is never cycled: its link is the one detached when the
// driver's probes attach.
bool cycled_probe(const ProbeInfo& probe, const std::set<std::string>& pinned);

// Probes of calls a thread may stay in, on a CPU or not: the CUDA host waits
// (times_every_call), every NCCL call (per call in both modes; a collective can block
// until the other ranks arrive) and the user's probes marked `waits = true`. While one
// runs its thread is marked, the call is listed in flight (the agent's scan), and the
// Python stack sampler ends the thread's stacks in it.
bool waits_in_calls(const ProbeSpec& spec);

// The operation a call reaches the driver with, as the driver's probes are told apart:
// its GPU work where it issues some (a synchronous copy is a copy), else its host wait.
using DriverOperation = std::pair<GpuWork, std::optional<HostWaitKind>>;
std::optional<DriverOperation> driver_operation(const ProbeSpec& spec);

// Where a function opens or closes a CUDA stream capture (the runtime's and the driver's
// begin, ...ToGraph included, and end; per-thread-stream variants alike). The kernel
// keeps each process's open captures from these (bpf/events.h: EACGM_PROBE_CAPTURE_*),
// and ingest/graph_capture.h follows the captures' streams.
enum class CaptureBoundary : std::uint8_t { kNone, kBegin, kEnd };
CaptureBoundary capture_boundary(std::string_view function);

// The specs to attach in `mode`: per call, every spec as traced per call; always-on,
// the skipped ones whose operation the selected driver probes see are marked
// `until_driver` and counted (a skipped one with no driver probe of its operation among
// `specs` is counted, unmarked). `one_layer`: per call too, the skipped ones are marked
// (`[trace] one_layer`). A marked spec counts its calls while no driver probe of its
// operation is attached anywhere (no libcuda found yet, or none on the machine); the
// attacher detaches it when one attaches (probe/attacher.h), so in steady state each
// operation is counted at one layer only. The user's specs are per call in both (never
// changed).
std::vector<ProbeSpec> specs_for_mode(std::vector<ProbeSpec> specs, TraceMode mode, bool one_layer);

}  // namespace eacgm::probe
