// The gap an event pair adds to a kernel queued behind earlier work: from the GPU passing
// the start event to the kernel starting, and from its end to the end event. Measured
// once per context on the timing thread's own stream: a kernel of its own (a two-kernel
// PTX module, JIT-compiled by the driver) spins 50 us to hold the stream, then an empty
// kernel is timed with an event pair behind it, five times; the median span, less what an
// empty kernel itself takes, is the gap subtracted from every queued span of that context.
// 0 when any step fails (a driver without PTX JIT, the tests' fake libcuda).
#pragma once

#include <cstdint>

#include "govern/hook/gpu_timer_state.h"

namespace eacgm::govern::hook {

// The current context must be `c`'s; its own stream and anchor event exist.
std::uint64_t measure_dispatch_gap(const DriverCalls& d, ContextState& c);

}  // namespace eacgm::govern::hook
