// The history as JSON (GET /api/v1/history/*, `eacgm history --json`): each document
// names its window and the tier it was answered from; rows are shaped as the live
// API's (functions with calls, errors, p50/p99 from the merged sketch, estimate marks).
#pragma once

#include <string>
#include <vector>

#include "analysis/call_summary.h"
#include "history/history_query.h"
#include "history/job_report.h"

namespace eacgm::exporting {

// Lists that grow with the processes come a page at a time: each document says the
// window's `total` and `next`, the cursor of the next page (null after the last).
std::string history_processes_json(const history::HistoryQuery& q, history::Tier tier,
                                   const history::ProcessPage& page);
std::string history_functions_json(const history::HistoryQuery& q, history::Tier tier,
                                   const std::vector<history::StoredFunction>& rows);
std::string history_kernels_json(const history::HistoryQuery& q, history::Tier tier,
                                 const std::vector<history::StoredKernel>& rows);
std::string history_gpus_json(const history::HistoryQuery& q, history::Tier tier,
                              const std::vector<history::StoredGpuPoint>& rows);
// The page of anomalies, and the first page of leaks (of the same size) with their count.
std::string history_anomalies_json(const history::HistoryQuery& q,
                                   const history::Page<history::StoredAnomaly>& anomalies,
                                   const history::Page<history::StoredLeak>& leaks);
std::string history_leaks_json(const history::HistoryQuery& q,
                               const history::Page<history::StoredLeak>& leaks);
// {"window":{...},"total","next","jobs":[...]} (export/history_jobs.h), with the job
// report's rows of the page's jobs.
std::string history_jobs_json(const history::HistoryQuery& q, history::Tier tier,
                              const history::Page<history::StoredJob>& jobs,
                              const std::vector<history::JobReportRow>& usage);
// {"window":{...},"total","next","nodes":[{"node","processes","running","jobs","calls",
// "errors","last_ns"}]}.
std::string history_nodes_json(const history::HistoryQuery& q, history::Tier tier,
                               const history::Page<history::StoredNode>& nodes);

// Everything of a window in one document (`eacgm history --json`): the lists' first
// pages, and their counts under "totals".
struct HistoryReport {
  history::HistoryQuery query;
  history::Tier tier = history::Tier::kRaw;
  history::ProcessPage processes;
  history::Page<history::StoredJob> jobs;
  std::vector<history::JobReportRow> job_usage;  // the report's rows of those jobs
  std::vector<history::StoredFunction> functions;
  std::vector<history::StoredKernel> kernels;
  std::vector<history::StoredGpuPoint> gpus;
  history::Page<history::StoredAnomaly> anomalies;
  history::Page<history::StoredLeak> leaks;
};
std::string history_report_json(const HistoryReport& report);

// The rows the live summary table prints, from stored functions (sketch kept alive by
// `sketches`).
std::vector<analysis::CallSummaryRow> history_summary_rows(const std::vector<history::StoredFunction>& rows);

}  // namespace eacgm::exporting
