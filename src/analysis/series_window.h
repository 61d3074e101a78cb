// The per-second series of a snapshot, for a window ending at the snapshot's time.
#pragma once

#include <cstddef>

#include "analysis/analysis_snapshot.h"
#include "analysis/rollup_series.h"

namespace eacgm::analysis {

// The seconds of the last `window_s` of a snapshot's ring, ending at the snapshot's time
// (or the ring's latest second, when that is later).
SeriesWindow series_window(const AnalysisSnapshot& snap, std::size_t window_s);

}  // namespace eacgm::analysis
