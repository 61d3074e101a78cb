// Test support: a Daemon (all of `eacgm serve`'s routes) on 127.0.0.1, an ephemeral port,
// over the recorded snapshot (recorded_snapshot.h) and its processes' facts.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "recorded_snapshot.h"
#include "server/daemon.h"

namespace eacgm::test {

class RecordedSource final : public server::SnapshotSource {
 public:
  explicit RecordedSource(std::shared_ptr<const analysis::AnalysisSnapshot> snap) : snap_(std::move(snap)) {}
  std::shared_ptr<const analysis::AnalysisSnapshot> latest() const override { return snap_; }
  std::optional<analysis::SeriesWindow> series(std::size_t window_s) const override {
    if (!snap_) return std::nullopt;
    return analysis::series_window(*snap_, window_s);
  }

 private:
  std::shared_ptr<const analysis::AnalysisSnapshot> snap_;
};

class RecordedProcessFacts final : public sample::ProcessFacts {
 public:
  sample::RankInfo rank(std::uint32_t pid) const override { return RecordedFacts::rank_of(pid); }
  std::string cmdline(std::uint32_t pid) const override { return RecordedFacts::cmdline_of(pid); }
  std::optional<std::string> container(std::uint32_t pid) const override {
    return RecordedFacts::container_of(pid);
  }
  bool alive(std::uint32_t pid) const override { return RecordedFacts::alive(pid); }
};

inline server::DaemonOptions recorded_daemon(std::shared_ptr<const analysis::AnalysisSnapshot> snap) {
  server::DaemonOptions o;
  o.listen = {"127.0.0.1", 0};
  o.source = std::make_shared<RecordedSource>(std::move(snap));
  o.facts = std::make_shared<RecordedProcessFacts>();
  o.hostname = "node-7";
  o.start_time_seconds = 1790000000.0;
  o.mode = [] { return std::string("always-on"); };
  return o;
}

}  // namespace eacgm::test
