// Host waits: the kinds of time a traced process spends blocked on the host (in a CUDA
// synchronization, a blocking copy, an NCCL set-up, a futex, a poll), and what the
// host-wait tracer delivers: per (process, kind) the waits since the last delivery as log
// buckets (bpf/events.h eacgm_hist_key: the latency sketch's own), and the processes
// behind them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eacgm {

enum class HostWaitKind : std::uint8_t {
  kStreamSync,    // cudaStreamSynchronize, cuStreamSynchronize
  kEventSync,     // cudaEventSynchronize, cuEventSynchronize
  kDeviceSync,    // cudaDeviceSynchronize, cuCtxSynchronize
  kBlockingCopy,  // synchronous copies (cudaMemcpy, cuMemcpyDtoH_v2, ...)
  kNccl,          // NCCL calls that wait for the other ranks (communicator init, split, finalize)
  kFutex,         // futex waits (syscalls)
  kInputWait,     // the poll family (syscalls)
};
inline constexpr std::size_t kHostWaitKinds = 7;

// "stream_sync", "event_sync", "device_sync", "blocking_copy", "nccl", "futex", "input_wait".
std::string_view host_wait_kind_name(HostWaitKind kind);
std::optional<HostWaitKind> parse_host_wait_kind(std::string_view name);

// A process the host-wait tracer saw wait, as the kernel recorded it at its first wait
// (or its exec, when it was watched before); delivered again when that changes (an exec,
// its exit). Times are CLOCK_MONOTONIC ns (the steady clock).
struct HostWaitProcess {
  std::uint32_t pid = 0;
  std::string comm;            // its main thread's name; "" unknown
  std::uint64_t start_ns = 0;  // when it started (or exec'd); 0 unknown
  std::uint64_t exit_ns = 0;   // when its main thread exited; 0 while running
};

// Seen by the host-wait tracer (futex and input waits): every wait is timed.
struct HostWaitTimings {
  std::uint32_t pid = 0;
  HostWaitKind kind = HostWaitKind::kFutex;
  std::uint32_t bucket = 0;  // eacgm_hist_key(duration)
  std::uint64_t count = 0;   // waits in the bucket since the last delivery
  std::uint64_t sum_ns = 0;
};

}  // namespace eacgm
