// A job report read from a store: the one sequence `eacgm report`, the report and jobs
// routes and the bench share (the store's rows, then job_report.h's sums).
#pragma once

#include <vector>

#include "core/result.h"
#include "history/job_report.h"
#include "history/store.h"

namespace eacgm::history {

// What a report reads: the held GPUs always, where the time went unless `kHeld`.
enum class ReportParts : std::uint8_t { kHeld, kHeldAndTime };

// The rows of the jobs `selector` picks over the window of `q`, from `tier`'s rows.
Result<std::vector<JobReportRow>> read_job_report(Store& store, const HistoryQuery& q,
                                                  const JobSelector& selector, Tier tier,
                                                  const ReportOptions& options,
                                                  ReportParts parts = ReportParts::kHeldAndTime);

// The report's held-GPU rows (no time) of a page of jobs, for the jobs list's columns.
Result<std::vector<JobReportRow>> read_jobs_usage(Store& store, const HistoryQuery& q, Tier tier,
                                                  const std::vector<StoredJob>& jobs,
                                                  const ReportOptions& options);

}  // namespace eacgm::history
