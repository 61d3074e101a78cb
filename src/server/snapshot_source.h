// SnapshotSource: what the daemon's routes read. The live trace's published snapshots
// are one source (LiveSnapshots); a store's history is another. A source answers from
// any thread and never blocks the trace.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "analysis/live_analysis.h"
#include "analysis/series_window.h"

namespace eacgm::server {

// What a route answers (503) while a source has no snapshot.
inline constexpr std::string_view kNoSnapshotYet = "no snapshot yet (the trace is starting)";

class SnapshotSource {
 public:
  virtual ~SnapshotSource() = default;
  // The newest snapshot; nullptr while there is none yet (the trace is starting).
  virtual std::shared_ptr<const analysis::AnalysisSnapshot> latest() const = 0;
  // The per-second points of the last `window_s` seconds; nullopt while there is no
  // snapshot yet.
  virtual std::optional<analysis::SeriesWindow> series(std::size_t window_s) const = 0;
};

// The snapshots a LiveAnalysis publishes each tick, and the series ring they carry.
class LiveSnapshots final : public SnapshotSource {
 public:
  explicit LiveSnapshots(std::shared_ptr<const analysis::LiveAnalysis> analysis)
      : analysis_(std::move(analysis)) {}
  std::shared_ptr<const analysis::AnalysisSnapshot> latest() const override { return analysis_->snapshot(); }
  std::optional<analysis::SeriesWindow> series(std::size_t window_s) const override;

 private:
  std::shared_ptr<const analysis::LiveAnalysis> analysis_;
};

}  // namespace eacgm::server
