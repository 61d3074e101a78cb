// LiveSnapshots: the series window of the newest published snapshot.
#include "server/snapshot_source.h"

namespace eacgm::server {

std::optional<analysis::SeriesWindow> LiveSnapshots::series(std::size_t window_s) const {
  auto snap = latest();
  if (!snap) return std::nullopt;
  return analysis::series_window(*snap, window_s);
}

}  // namespace eacgm::server
