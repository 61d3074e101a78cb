// The history as text (`eacgm history`): the window, the functions table `eacgm run`
// prints (from the merged sketches), then processes, kernels, GPUs, anomalies and leaks.
#pragma once

#include <string>

#include "export/history_json.h"

namespace eacgm::exporting {

std::string render_history_text(const HistoryReport& report);

}  // namespace eacgm::exporting
