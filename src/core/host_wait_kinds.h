// Which traced calls are host waits: the one table that classifies probed functions by
// name into wait kinds (stream, event and device synchronization, blocking copies, NCCL
// calls that wait for the other ranks). Calls that only enqueue work (async copies,
// launches, stream waits on events, NCCL collectives) are not waits.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "core/host_wait.h"

namespace eacgm {

// The wait kind of a probed function (a ProbeInfo::function such as "cudaMemcpy_ptds" or
// "cuMemcpyDtoH_v2": per-thread-stream and `_v2` suffixes are ignored), or nullopt.
std::optional<HostWaitKind> wait_kind_of_function(std::string_view function);

// The table itself: base names (without those suffixes) and their kinds.
std::span<const std::pair<std::string_view, HostWaitKind>> host_wait_functions();

}  // namespace eacgm
