// What the hooks timed on the GPU (analysis/gpu_times.h) as `eacgm run`'s table and as
// JSON (`run --json`'s "gpu_time", /api/v1/gpu_time; docs/report.md, docs/api.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/gpu_times.h"
#include "export/gpu_json.h"

namespace eacgm::exporting {

// "" when no process carried the hook with GPU time on.
std::string render_gpu_time(const analysis::GpuTimeSummary& summary, std::size_t max_rows = 30,
                            std::size_t max_name_width = 60);
// Kernels past `max_kernels` (the least GPU time) are left out and counted in
// "kernels_left_out".
json gpu_time_json(const analysis::GpuTimeSummary& summary, std::size_t max_kernels = SIZE_MAX);

}  // namespace eacgm::exporting
