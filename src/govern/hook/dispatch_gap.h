// The gap an event pair adds to a kernel queued behind earlier work: from the GPU passing
// the start event to the kernel starting, and from its end to the end event. Measured on
// the timing thread's own stream: a kernel of its own (a two-kernel PTX module,
// JIT-compiled by the driver) spins 50 us to hold the stream, then a one-block kernel that
// writes one word is timed with an event pair behind it, five times per round. A round is
// made at each of the first kGapRounds anchor refreshes (one a second), while the program
// runs, not only at its start. The gap is the median of all spans so far, less what an
// empty kernel itself takes (the profiler's 0.64 us on the H200,
// tests/gpu/empty_kernel_time.py). 0 when any step fails (a driver without PTX JIT, the
// tests' fake libcuda). The store makes the gap 0.2 us larger than an empty kernel's,
// closer to what PyTorch's kernels see (docs/gpu-time.md, *Accuracy*).
#pragma once

#include <cstdint>

#include "govern/hook/gpu_timer_state.h"

namespace eacgm::govern::hook {

// One round of spans into `c`; false when a step failed. The current context must be
// `c`'s; its own stream exists.
bool measure_dispatch_gap_round(const DriverCalls& d, ContextState& c);
// The gap from the spans measured so far (0 before any).
std::uint64_t dispatch_gap_of(const ContextState& c);

}  // namespace eacgm::govern::hook
