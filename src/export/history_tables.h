// The history as text (`eacgm history`): the window, the functions table `eacgm run`
// prints (from the merged sketches), then processes, kernels, GPUs, anomalies and leaks.
#pragma once

#include <string>

#include "export/history_jobs.h"
#include "export/history_json.h"

namespace eacgm::exporting {

std::string render_history_text(const HistoryReport& report);

// The jobs (export/history_jobs.h) as a text table ("" when there are none), as
// render_history_text prints it.
std::string history_jobs_table(const std::vector<HistoryJob>& jobs);

}  // namespace eacgm::exporting
