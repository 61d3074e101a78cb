// The job's hang verdict across nodes: this node's NCCL rank standings, as the
// collectives analysis (registered before this one) put them into the snapshot being
// made, merged with the other nodes' rows of the shared store, each tick; nothing
// without a shared store.
#include "analysis/job_verdict.h"

#include <utility>

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class JobVerdicts final : public Analysis {
 public:
  explicit JobVerdicts(const Environment& env) : env_(env) {}
  Declaration declaration() const override {
    return {"job_verdict", Input::kTick, {typeid(JobVerdictSummary)}};
  }
  void configure(const AnalysisSettings& settings) override {
    verdict_.set_min_age_ns(settings.inflight_min_age_ns);
  }
  void publish(SnapshotParts& parts, const Moment& now, bool) override {
    // Without a shared store the node's own hang diagnosis says all there is to say.
    if (!env_.fleet_reports) return parts.put(JobVerdictSummary{});
    // Nothing before the store's first read: its node name and clock come with it.
    const auto fleet = env_.fleet_reports();
    if (!fleet) {
      JobVerdictSummary waiting;
      waiting.shared = true;
      return parts.put(std::move(waiting));
    }
    verdict_.update(parts.get<NcclProgressSummary>(), fleet.get(), now.wall_ns());
    parts.put(verdict_.summary());
  }

 private:
  const Environment& env_;
  JobVerdict verdict_;
};

}  // namespace

std::unique_ptr<Analysis> make_job_verdict(const Environment& env) {
  return std::make_unique<JobVerdicts>(env);
}

}  // namespace eacgm::analysis
