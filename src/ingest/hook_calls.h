// The driver calls a process's hook counted for it (core/gpu_span.h GpuCallCount: a
// process on its own copy of the driver, which no uprobe reaches), turned into the counted
// calls the rest of the agent takes from the probes (core/call_counts.h): per (process,
// driver function), the calls and bytes since the last delivery, under a ProbeInfo made
// once per function from the driver catalogue's spec and marked `hook` (exact, and no trap
// paid for it); and the time spent in those that block the host, every call timed, as
// the sampled durations the probes deliver (core/call_counts.h CallTimings: each of the
// hook's buckets filed at its calls' mean). Functions the catalogue does not list
// (cuMemGetInfo, context calls) are left out, as no probe would count them either.
// Bounded: a process's entries go with its ring's last read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/clock.h"
#include "core/gpu_span.h"

namespace eacgm::ingest {

// Probe ids of the hook's functions, above any attach cookie.
inline constexpr std::uint32_t kHookProbeIdBase = 0xf0000000u;

class HookCalls {
 public:
  // Appends to `counts` and `timings` what `batch`'s cumulative calls and waits added
  // since the last batch, and forgets the processes whose ring was read for the last time.
  void deltas(const GpuTimeBatch& batch, std::vector<CallCount>& counts, std::vector<CallTimings>& timings);
  // Appends `batch`'s memory calls to `out`, in order.
  void events(const GpuTimeBatch& batch, std::vector<CallEvent>& out);

 private:
  // nullptr for a function the catalogue does not list. `counted`: the probe of its
  // counts; else of its calls one by one.
  std::shared_ptr<const ProbeInfo> probe_of(const std::string& function, bool counted = true);

  WallClock clock_;
  std::map<std::string, ProbeSpec> specs_;  // the driver catalogue's, by name (at first use)
  std::map<std::pair<std::string, bool>, std::shared_ptr<const ProbeInfo>> probes_;
  struct Sent {
    std::uint64_t calls = 0, bytes = 0;
  };
  std::map<std::pair<std::uint32_t, std::string>, Sent> sent_;
  struct WaitSent {
    std::uint64_t calls = 0, ns = 0, failed = 0;
  };
  // By (pid, function, the hook's bucket).
  std::map<std::tuple<std::uint32_t, std::string, std::uint32_t>, WaitSent> waits_sent_;
};

}  // namespace eacgm::ingest
