// The GPU part of `eacgm run`'s summary: one table of GPUs, one of the traced processes
// with their traced calls and what NVML saw of them on each GPU.
#pragma once

#include <string>

#include "analysis/gpu_activity.h"

namespace eacgm::exporting {

// Empty when no GPU sample was taken (no NVML, or sampling off).
std::string render_gpu_activity(const analysis::GpuActivity& activity);

}  // namespace eacgm::exporting
