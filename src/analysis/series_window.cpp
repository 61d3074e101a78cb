// A window of a snapshot's per-second series.
#include "analysis/series_window.h"

#include <algorithm>

namespace eacgm::analysis {

SeriesWindow series_window(const AnalysisSnapshot& snap, std::size_t window_s) {
  const RollupView& series = snap.get<RollupView>();
  const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(snap.time.time_since_epoch()).count();
  const std::int64_t end = std::max<std::int64_t>(now_s, series.latest());
  return SeriesWindow{snap.time, snap.sequence, window_s, series.domains(), series.points(end, window_s)};
}

}  // namespace eacgm::analysis
