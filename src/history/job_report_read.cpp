// A job report from a store's rows.
#include "history/job_report_read.h"

#include <utility>

namespace eacgm::history {

Result<std::vector<JobReportRow>> read_job_report(Store& store, const HistoryQuery& q,
                                                  const JobSelector& selector, Tier tier,
                                                  const ReportOptions& options, ReportParts parts) {
  auto held = store.held_gpus(q, selector, tier);
  if (!held) return std::move(held).take_error();
  std::vector<JobReportRow> rows = job_report_rows(std::move(held).value(), options);
  if (parts == ReportParts::kHeld || rows.empty()) return rows;
  auto time = store.job_time_rows(q, selector, tier);
  if (!time) return std::move(time).take_error();
  add_job_times(rows, *time, q, options);
  return rows;
}

Result<std::vector<JobReportRow>> read_jobs_usage(Store& store, const HistoryQuery& q, Tier tier,
                                                  const std::vector<StoredJob>& jobs,
                                                  const ReportOptions& options) {
  if (jobs.empty()) return std::vector<JobReportRow>{};
  // Past a page, every job's rows at once rather than a list of thousands of ids.
  constexpr std::size_t kMostIds = 500;
  JobSelector selector{JobSelector::By::kAll, {}, {}};
  if (jobs.size() <= kMostIds) {
    selector.by = JobSelector::By::kJobs;
    for (const StoredJob& j : jobs) selector.values.push_back(j.job);
  }
  return read_job_report(store, q, selector, tier, options, ReportParts::kHeld);
}

}  // namespace eacgm::history
