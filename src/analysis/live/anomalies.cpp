// Slow calls, slow intervals and level shifts. The summary changes rarely: a new part is
// made only when it did.
#include "analysis/analysis.h"
#include "analysis/anomaly_detector.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

bool same(const AnomalySummary& a, const AnomalySummary& b) {
  return a.total == b.total && a.functions == b.functions && a.interval_total == b.interval_total &&
         a.level_shifts == b.level_shifts && a.context_updates == b.context_updates &&
         a.untracked_calls == b.untracked_calls;
}

class Anomalies final : public Analysis {
 public:
  Declaration declaration() const override {
    return {
        "anomalies", Input::kCalls | Input::kCounts | Input::kTick | Input::kEnd, {typeid(AnomalySummary)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(detector_, calls); }
  void on_counts(std::span<const CallCount>, std::span<const CallTimings> timings,
                 const Moment& now) override {
    const std::uint64_t now_ns = now.wall_ns();
    for (const auto& t : timings) detector_.add(t, now_ns);
  }
  void on_tick(const Moment& now) override { detector_.close_interval(now.wall_ns()); }
  void on_end(const Moment& now) override { detector_.close_interval(now.wall_ns()); }
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    const AnomalySummary& found = detector_.summary();
    if (!published_ || !same(*published_, found)) published_ = std::make_shared<const AnomalySummary>(found);
    parts.put(published_);
  }

 private:
  AnomalyDetector detector_;
  std::shared_ptr<const AnomalySummary> published_;
};

}  // namespace

std::unique_ptr<Analysis> make_anomalies(const Environment&) { return std::make_unique<Anomalies>(); }

}  // namespace eacgm::analysis
