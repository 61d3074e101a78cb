// The Python hot spots from the sampled stacks. Rows and folded stacks are made again
// only after new samples (or when a window's slice left), and, since a full profile
// takes a tenth of a second to read out, at most every kRefresh until the final snapshot.
#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/python_profile.h"

namespace eacgm::analysis {
namespace {

class Python final : public Analysis {
 public:
  static constexpr std::chrono::seconds kRefresh{5};

  Declaration declaration() const override {
    return {"python", Input::kPythonStacks | Input::kTick, {typeid(PythonHotSpots)}};
  }
  void configure(const AnalysisSettings& settings) override {
    profile_.set_hz(settings.python_hz);
    profile_.set_limits(settings.python_limits);
  }
  void on_python_stacks(std::span<const PythonStack> stacks) override { profile_.add(stacks); }
  void on_tick(const Moment& now) override {
    profile_.expire(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.steady.time_since_epoch()).count()));
  }
  void publish(SnapshotParts& parts, const Moment& now, bool final) override {
    if (!published_ ||
        (published_->changes != profile_.changes() && (final || now.steady - made_ >= kRefresh))) {
      published_ = std::make_shared<const PythonHotSpots>(profile_.hot_spots());
      made_ = now.steady;
    }
    parts.put(published_);
  }

 private:
  PythonProfile profile_;
  std::shared_ptr<const PythonHotSpots> published_;
  std::chrono::steady_clock::time_point made_;
};

}  // namespace

std::unique_ptr<Analysis> make_python(const Environment&) { return std::make_unique<Python>(); }

}  // namespace eacgm::analysis
