// The driver calls a process's hook counted for it (core/gpu_span.h GpuCallCount: a
// process on its own copy of the driver, which no uprobe reaches), turned into the counted
// calls the rest of the agent takes from the probes (core/call_counts.h): per (process,
// driver function), the calls and bytes since the last delivery, under a ProbeInfo made
// once per function from the driver catalogue's spec and marked `hook` (exact, and no trap
// paid for it). Functions the catalogue does not list (cuMemGetInfo, context calls) are
// left out, as no probe would count them either. Bounded: a process's entries go with its
// ring's last read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/call_counts.h"
#include "core/gpu_span.h"

namespace eacgm::ingest {

// Probe ids of the hook's functions, above any attach cookie.
inline constexpr std::uint32_t kHookProbeIdBase = 0xf0000000u;

class HookCalls {
 public:
  // Appends to `out` what `batch`'s cumulative calls added since the last batch, and
  // forgets the processes whose ring was read for the last time.
  void deltas(const GpuTimeBatch& batch, std::vector<CallCount>& out);

 private:
  // nullptr for a function the catalogue does not list.
  std::shared_ptr<const ProbeInfo> probe_of(const std::string& function);

  std::map<std::string, ProbeSpec> specs_;  // the driver catalogue's, by name (at first use)
  std::map<std::string, std::shared_ptr<const ProbeInfo>> probes_;
  struct Sent {
    std::uint64_t calls = 0, bytes = 0;
  };
  std::map<std::pair<std::uint32_t, std::string>, Sent> sent_;
};

}  // namespace eacgm::ingest
