// The NCCL families of /metrics: bandwidth per (communicator, call), per communicator the
// arrival skew of this node's ranks and which rank straggles, and where each rank stands.
#pragma once

#include <cstddef>
#include <cstdint>

#include "analysis/analysis_snapshot.h"
#include "core/prometheus_text.h"

namespace eacgm::exporting {

// The (communicator, call) rows and the communicators past `max_series` (the skew's, and
// the progress's), which append_nccl_metrics leaves out (eacgm_series_folded_total{kind="nccl"}
// counts them).
std::uint64_t nccl_series_left_out(const analysis::AnalysisSnapshot& snap, std::size_t max_series);

void append_nccl_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                         std::size_t max_series);

}  // namespace eacgm::exporting
