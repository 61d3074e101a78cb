// The GPU work part of `eacgm run`'s summary: kernels launched, memsets and copies per
// process, stream and name, each operation once whichever API layer issued it, with the
// part CUDA graph launches executed.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/gpu_work.h"

namespace eacgm::exporting {

// "gpu work: N kernels launched, M memsets, C copies" and one row per (pid, stream,
// kind, name or direction), most operations first, at most `max_rows`. Empty when no
// GPU work was traced.
std::string render_gpu_work(const analysis::GpuWorkStats& work, std::size_t max_rows = 40,
                            std::size_t max_name_width = 60);

}  // namespace eacgm::exporting
