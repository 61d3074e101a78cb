// One line of the duty cycle's switch log ([trace] duty_switch_log, src/agent/duty_cycle.h),
// the format bench/gpu/window_cost.py reads; eacgm-bench-bare's cycled empty programs
// (BARE_CYCLE) write the same lines.
#pragma once

#include <cstdio>

namespace eacgm {

// "switch attached=0|1 began_ns= counting_ns= ended_ns= ok=0|1", CLOCK_MONOTONIC
// nanoseconds, then a flush.
void write_duty_switch(std::FILE* file, bool attached, long long began_ns, long long counting_ns,
                       long long ended_ns, bool ok);

}  // namespace eacgm
