// `eacgm gpu` output: a GpuSnapshot as a compact nvidia-smi-like table or as JSON
// (schema in docs/gpu.md; absent fields are null, never dropped).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_sample.h"

namespace eacgm::exporting {

// nvmlClocksEventReason* bits as names ("gpu_idle", "sw_power_cap", ...); unknown bits
// as "0x...".
std::vector<std::string> clock_event_reason_names(std::uint64_t mask);

// The device table, then (with `processes`) the process table, then one line per GPU
// error or per failure of the pass. Absent values print as "-".
std::string render_gpu_table(const GpuSnapshot& snap, bool processes);

// One JSON object; indent < 0 gives a single line (for --watch: one object per line).
std::string render_gpu_json(const GpuSnapshot& snap, bool processes, int indent = 2);

// What `eacgm gpu --json` prints when it cannot sample at all (no NVML, NVML init
// failed, bad settings): {"error": "<why>", "gpus": []} (and "processes": [] with
// `processes`), so a consumer reading stdout learns why instead of getting nothing.
std::string render_gpu_error_json(std::string_view error, bool processes, int indent = 2);

}  // namespace eacgm::exporting
