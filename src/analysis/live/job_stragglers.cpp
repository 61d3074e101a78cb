// Stragglers across the job's nodes: the shared store's NCCL standings, as the history
// writer last read them, joined by instance (analysis/job_stragglers.h) each tick; nothing
// without a shared store.
#include "analysis/job_stragglers.h"

#include <utility>

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class JobStragglers final : public Analysis {
 public:
  explicit JobStragglers(const Environment& env) : env_(env) {}
  Declaration declaration() const override {
    return {"job_stragglers", Input::kTick, {typeid(JobStragglersSummary)}};
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    const auto fleet = env_.fleet_reports ? env_.fleet_reports() : nullptr;
    if (!fleet) return parts.put(JobStragglersSummary{});
    // The same read as the last tick's: the same answer.
    if (fleet != last_) {
      last_ = fleet;
      summary_.communicators = job_stragglers(fleet->rows);
    }
    parts.put(summary_);
  }

 private:
  const Environment& env_;
  std::shared_ptr<const FleetReports> last_;
  JobStragglersSummary summary_;
};

}  // namespace

std::unique_ptr<Analysis> make_job_stragglers(const Environment& env) {
  return std::make_unique<JobStragglers>(env);
}

}  // namespace eacgm::analysis
