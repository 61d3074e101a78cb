// The per-second rollups: a ring of an hour in chunks that snapshots share copy-on-write.
#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/rollup_series.h"

namespace eacgm::analysis {
namespace {

class Series final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"series", Input::kCalls | Input::kCounts | Input::kGpu, {typeid(RollupView)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(series_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings>,
                 const Moment& now) override {
    const std::int64_t now_s =
        std::chrono::duration_cast<std::chrono::seconds>(now.wall.time_since_epoch()).count();
    for (const auto& c : counts) series_.add(c, now_s);
  }
  void on_gpu(const GpuSnapshot& snapshot) override { series_.add(snapshot); }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(series_.view()); }

 private:
  RollupSeries series_;
};

}  // namespace

std::unique_ptr<Analysis> make_series(const Environment&) { return std::make_unique<Series>(); }

}  // namespace eacgm::analysis
