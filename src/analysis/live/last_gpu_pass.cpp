// The latest GPU sampling pass, as taken (none before the first).
#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class LastGpuPass final : public Analysis {
 public:
  Declaration declaration() const override { return {"last gpu pass", Input::kGpu, {typeid(GpuSnapshot)}}; }
  void on_gpu(const GpuSnapshot& snapshot) override { last_ = std::make_shared<const GpuSnapshot>(snapshot); }
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    if (last_) parts.put(last_);
  }

 private:
  std::shared_ptr<const GpuSnapshot> last_;
};

}  // namespace

std::unique_ptr<Analysis> make_last_gpu_pass(const Environment&) { return std::make_unique<LastGpuPass>(); }

}  // namespace eacgm::analysis
