// DutyWindow: the state of the duty-cycled probes (agent/duty_cycle.h), as the BPF side
// sees it in `duty_window` (bpf/events.h, EACGM_DUTY_*): detached, attached and counting,
// or being attached or detached.
#pragma once

#include <cstdint>

namespace eacgm {

enum class DutyWindow : std::uint32_t {
  kOff = 0,        // detached: no traps
  kOpen = 1,       // attached, counting
  kSwitching = 2,  // being attached or detached: some traps, no counts
};

}  // namespace eacgm
