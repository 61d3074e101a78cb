// A probe spec encoded for the kernel: the entry of the BPF `probes` map that the generic
// programs read by the attach cookie.
#pragma once

#include <cstdint>

#include "bpf/events.h"
#include "core/probe_spec.h"

namespace eacgm::probe {

// Encodes a spec's captures for the kernel (shared by the loader and its tests). A
// counted probe (always-on) gets EACGM_PROBE_COUNT and its count rule: the handle it
// splits counts by (a launch's kernel) and its bytes, from the spec's derived args;
// one call in 2^sample_shift per CPU is timed. Probes of calls a thread waits in
// (waits_in_calls) with a return get EACGM_PROBE_WAIT. `cycled`: a counted probe that
// counts only while the duty window is open. `tally`: a per-call probe whose calls are
// also counted at entry (EACGM_PROBE_TALLY), so their count does not depend on the ring.
eacgm_probe encode_probe(const ProbeSpec& spec, bool counted = false, std::uint8_t sample_shift = 0,
                         bool cycled = false, bool tally = false);

}  // namespace eacgm::probe
