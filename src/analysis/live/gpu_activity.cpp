// GPU activity per device and process: the traced calls joined with NVML's passes.
#include "analysis/gpu_activity.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class GpuActivityAnalysis final : public Analysis {
 public:
  explicit GpuActivityAnalysis(const Environment& env) : env_(env) {}
  Declaration declaration() const override {
    return {"gpu activity",
            Input::kCalls | Input::kCounts | Input::kGpu | Input::kTick | Input::kEnd,
            {typeid(GpuActivity)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(gpu_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings>, const Moment&) override {
    add_each(gpu_, counts);
  }
  void on_gpu(const GpuSnapshot& snapshot) override { gpu_.add(snapshot); }
  void on_tick(const Moment& now) override {
    gpu_.sweep(now.steady, env_.process_alive, kExitChecksPerTick, kExitGrace);
  }
  void on_end(const Moment& now) override {
    gpu_.sweep(now.steady, env_.process_alive, gpu_.process_count(), {});
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(gpu_); }

 private:
  const Environment& env_;
  GpuActivity gpu_;
};

}  // namespace

std::unique_ptr<Analysis> make_gpu_activity(const Environment& env) {
  return std::make_unique<GpuActivityAnalysis>(env);
}

}  // namespace eacgm::analysis
