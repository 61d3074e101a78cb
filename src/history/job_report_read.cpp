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

}  // namespace eacgm::history
