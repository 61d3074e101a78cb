// The hook's side of holds (hookcore/stream_hold.h): each context's page of hold words,
// registered with the driver by the timing thread; a launch's hold begun (the stream's
// wait enqueued) and ended; and the watchdog thread that releases a hold its launching
// thread did not end in time. Internal to the hook.
#pragma once

#include <cstdint>

#include "govern/hook/cuda_types.h"

namespace eacgm::govern::hook {

struct TimerState;
struct ContextState;

// Registers the current context's page of hold words (context slot `index`); on failure
// the context's launches are never held. The timing thread, once per context.
void register_hold_page(TimerState& s, ContextState& c, int index);

// Holds `stream` (of the context whose page is `page`, at `device` on the GPU) until
// end_hold: the stream waits for the calling thread's word. Returns the slot to pass to
// end_hold, or -1 when the launch is not held (no slot left for this thread, the wait
// refused).
int begin_hold(TimerState& s, CUstream stream, std::uint32_t* page, CUdeviceptr device, std::uint64_t now_ns);
// Ends it; true when this call released the stream (the kernel was queued behind the start
// event before the stream went on), false when the watchdog had.
bool end_hold(TimerState& s, int slot);

}  // namespace eacgm::govern::hook
