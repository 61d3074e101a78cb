// The history as JSON (GET /api/v1/history/*, `eacgm history --json`): each document
// names its window and the tier it was answered from; rows are shaped as the live
// API's (functions with calls, errors, p50/p99 from the merged sketch, estimate marks).
#pragma once

#include <string>
#include <vector>

#include "analysis/call_summary.h"
#include "history/history_query.h"

namespace eacgm::exporting {

std::string history_processes_json(const history::HistoryQuery& q, history::Tier tier,
                                   const std::vector<history::StoredProcess>& rows);
std::string history_functions_json(const history::HistoryQuery& q, history::Tier tier,
                                   const std::vector<history::StoredFunction>& rows);
std::string history_kernels_json(const history::HistoryQuery& q, history::Tier tier,
                                 const std::vector<history::StoredKernel>& rows);
std::string history_gpus_json(const history::HistoryQuery& q, history::Tier tier,
                              const std::vector<history::StoredGpuPoint>& rows);
std::string history_anomalies_json(const history::HistoryQuery& q,
                                   const std::vector<history::StoredAnomaly>& rows,
                                   const std::vector<history::StoredLeak>& leaks);

// {"window":{...},"jobs":[...]}: the jobs of the processes (export/history_jobs.h).
std::string history_jobs_json(const history::HistoryQuery& q, history::Tier tier,
                              const std::vector<history::StoredProcess>& processes);

// Everything of a window in one document (`eacgm history --json`).
struct HistoryReport {
  history::HistoryQuery query;
  history::Tier tier = history::Tier::kRaw;
  std::vector<history::StoredProcess> processes;
  std::vector<history::StoredFunction> functions;
  std::vector<history::StoredKernel> kernels;
  std::vector<history::StoredGpuPoint> gpus;
  std::vector<history::StoredAnomaly> anomalies;
  std::vector<history::StoredLeak> leaks;
};
std::string history_report_json(const HistoryReport& report);

// The rows the live summary table prints, from stored functions (sketch kept alive by
// `sketches`).
std::vector<analysis::CallSummaryRow> history_summary_rows(const std::vector<history::StoredFunction>& rows);

}  // namespace eacgm::exporting
