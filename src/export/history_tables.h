// The history as text (`eacgm history`): the window, the functions table `eacgm run`
// prints (from the merged sketches), then processes, kernels, GPUs, anomalies and leaks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "export/history_jobs.h"
#include "export/history_json.h"

namespace eacgm::exporting {

// The lists as the report holds them (their first pages), each followed by how many
// more the window has; at most `limit` kernels.
std::string render_history_text(const HistoryReport& report, std::size_t limit = 20);

// The jobs (export/history_jobs.h) as a text table ("" when there are none), as
// render_history_text prints it; under a job that held GPUs, its line of `usage`.
std::string history_jobs_table(const std::vector<history::StoredJob>& jobs,
                               const std::vector<history::JobReportRow>& usage);

}  // namespace eacgm::exporting
