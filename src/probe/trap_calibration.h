// What one probe hit costs on this machine, measured at start in a few tens of
// milliseconds: uprobes on two functions of our own binary (one whose first instruction
// the kernel emulates, one it must single-step), called in a loop by a forked child with
// and without the probes; the budget controller turns hit counts into time with it.
#pragma once

#include <cstdint>

#include "core/probe_cost.h"
#include "core/result.h"

namespace eacgm::probe {

struct CalibrationOptions {
  std::uint32_t calls_per_round = 2000;
  std::uint32_t rounds = 5;  // the fastest round counts: the others met interrupts
};

// Loads a BPF object of its own (the agent's maps stay untouched), measures, detaches.
// Needs what tracing needs (root, BTF); x86-64 only.
Result<TrapCosts> calibrate_traps(const CalibrationOptions& options = CalibrationOptions{});

}  // namespace eacgm::probe
