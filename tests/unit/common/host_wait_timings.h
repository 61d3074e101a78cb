// Test support: `n` futex/poll-family waits of `each_ns` each for one process, as the
// host-wait tracer delivers them (one log bucket).
#pragma once

#include <cstdint>

#include "bpf/events.h"
#include "core/host_wait.h"

namespace eacgm::test {

inline HostWaitTimings syscall_waits(std::uint32_t pid, HostWaitKind kind, std::uint64_t each_ns,
                                     std::uint64_t n) {
  HostWaitTimings w;
  w.pid = pid;
  w.kind = kind;
  w.bucket = eacgm_hist_key(each_ns);
  w.count = n;
  w.sum_ns = each_ns * n;
  return w;
}

}  // namespace eacgm::test
