// On-demand capture: one process traced call by call for a short window while the rest
// of the machine stays counted. The values a capture hands over, and the interface the
// server asks one through (agent/capture_recorder.h implements it over the trace).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/call_event.h"
#include "core/gpu_sample.h"
#include "core/python_stack.h"

namespace eacgm {

// What one capture saw. Times are CLOCK_MONOTONIC nanoseconds, as the calls' ts_ns:
// the process was armed (its counted probes record each call) between armed_ns and
// disarming_ns, and the switches themselves began at begin_ns and ended at end_ns. Every
// call that started and returned between armed_ns and disarming_ns is in `calls`; none
// that returned before begin_ns or started after end_ns is.
struct CapturedWindow {
  std::uint32_t pid = 0;
  std::string comm;
  std::uint64_t begin_ns = 0, armed_ns = 0, disarming_ns = 0, end_ns = 0;
  std::uint64_t wall_offset_ns = 0;   // Unix-epoch ns minus monotonic ns (the calls' ts_ns are epoch)
  std::vector<CallEvent> calls;       // in the order the reader saw them
  std::vector<GpuSnapshot> gpus;      // GPU passes inside the window (devices and this process)
  std::vector<PythonStack> stacks;    // the process's Python samples inside the window
  std::uint64_t calls_left_out = 0;   // past max_calls (truncated)
  std::uint64_t stacks_left_out = 0;  // past max_stacks
  bool drained = true;                // false: the reader did not catch up before the answer
};

// Why a capture did not happen.
enum class CaptureRefusal : std::uint8_t {
  kNone,
  kBusy,     // a capture of that process is running
  kTooMany,  // EACGM_MAX_CAPTURES processes are captured already
  kNoTrace,  // no trace is running (between reloads, or a mode without counted probes)
  kFailed,   // the BPF map refused the update
};

struct CaptureResult {
  CaptureRefusal refusal = CaptureRefusal::kNone;
  std::string message;  // with a refusal: one line for the user
  CapturedWindow window;
};

class CaptureControl {
 public:
  struct Limits {
    std::size_t max_calls = 200000;  // ~60 MB of JSON at most (docs/api.md)
    std::size_t max_stacks = 20000;
    std::size_t max_gpu_passes = 600;
  };
  virtual ~CaptureControl() = default;
  // Arms `pid` for `window`, waits (returning early when `cancel` becomes true), disarms
  // it and waits for the reader to hand on the calls made meanwhile. Blocks the caller.
  virtual CaptureResult capture(std::uint32_t pid, std::chrono::milliseconds window,
                                const std::atomic<bool>& cancel) = 0;
};

}  // namespace eacgm
