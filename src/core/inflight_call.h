// A waiting call in flight: a thread inside a call that can wait (a synchronisation, a
// blocking copy, an NCCL call, a user probe marked `waits = true`), as the agent's scan
// of the kernel's table (bpf/events.h struct eacgm_call_in_flight) found it.
#pragma once

#include <cstdint>
#include <memory>

#include "core/call_event.h"
#include "core/python_stack.h"

namespace eacgm {

struct InflightCall {
  // The call as far as its entry tells: pid, tid, the thread's comm, the probe, ts_ns
  // (the entry, ns since the Unix epoch), the arguments read at entry (fault_mask marks
  // the ones not known: not read in this mode, out-parameters, strings, faults) and, for
  // NCCL calls, the communicator's fields; has_exit is false.
  CallEvent call;
  std::uint64_t entry_mono_ns = 0;  // the entry, CLOCK_MONOTONIC (the BPF clock)
  // The thread's Python stack in the call (ingest/stuck_stacks.h: read once the call is
  // [hangs] min_age_s old, for processes the Python sampler reads): frames[0] is the call
  // (a native frame), then the Python frames, innermost first. nullptr: not read, or not
  // a Python thread.
  std::shared_ptr<const PythonStack> python_stack;
};

}  // namespace eacgm
