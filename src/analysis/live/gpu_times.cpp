// What the hooks timed on the GPU (processes carrying libeacgm_hook.so with GPU time on),
// checked against NVML's passes.
#include "analysis/gpu_times.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class GpuTime final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"gpu time", Input::kGpuTime | Input::kGpu, {typeid(GpuTimeSummary)}};
  }
  void on_gpu_time(const GpuTimeBatch& batch) override { times_.add(batch); }
  void on_gpu(const GpuSnapshot& snapshot) override { times_.observe_nvml(snapshot); }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(times_.summary()); }

 private:
  GpuTimes times_;
};

}  // namespace

std::unique_ptr<Analysis> make_gpu_times(const Environment&) { return std::make_unique<GpuTime>(); }

}  // namespace eacgm::analysis
