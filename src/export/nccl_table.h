// The NCCL part of `eacgm run`'s summary: per (communicator, call) the bytes, host-side
// durations and bandwidths, then per communicator the ranks' arrival skew and straggler.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"

namespace eacgm::exporting {

// "1.23 GB/s" (10^9 bytes a second, as nccl-tests prints), "-" when absent.
std::string format_bandwidth(const std::optional<double>& bytes_per_second);

// Empty when no NCCL call that moves data was traced.
std::string render_nccl_table(const analysis::NcclStats& stats, const analysis::NcclSkewSummary& skew,
                              std::size_t max_rows = 40);

}  // namespace eacgm::exporting
