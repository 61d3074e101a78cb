// The host-wait part of `eacgm run`'s summary: per traced process and wait kind, how many
// waits, their total time, its share of the process's wall time, and p50/p99.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/host_waits.h"

namespace eacgm::exporting {

// Empty when no wait was seen; totals estimated from sampled calls are marked "~".
std::string render_host_waits(const analysis::HostWaitSummary& waits, std::size_t max_rows = 40);

}  // namespace eacgm::exporting
