// Kernel launches per name and launch shape.
#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/kernel_stats.h"

namespace eacgm::analysis {
namespace {

class Kernels final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"kernels", Input::kCalls | Input::kCounts, {typeid(KernelStats)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(kernels_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings>, const Moment&) override {
    add_each(kernels_, counts);
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(kernels_); }

 private:
  KernelStats kernels_;
};

}  // namespace

std::unique_ptr<Analysis> make_kernels(const Environment&) { return std::make_unique<Kernels>(); }

}  // namespace eacgm::analysis
