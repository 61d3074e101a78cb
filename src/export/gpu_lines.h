// GPU samples inside the `eacgm trace` stream: JSON Lines records beside the call
// records (docs/events.md, "GPU samples"), or short text lines.
#pragma once

#include <fmt/format.h>

#include "core/gpu_sample.h"

namespace eacgm::exporting {

// One line per GPU (`"name":"device"`, `"gpu":{...}`), one per process on a GPU
// (`"name":"process"`, its `pid`, `"process":{...}`), and, when the pass had failures,
// one `"name":"errors"` line; all with `"domain":"gpu"` and every field of a call line
// (pid 0 when not about one process; tid 0, comm "", dur_ns/ret null, args {}). The
// objects are those of `eacgm gpu --json`.
void append_gpu_jsonl(fmt::memory_buffer& out, const GpuSnapshot& snap);

// 12:34:56.789012 gpu 0 NVIDIA H100: util 99%, sm active 97%, tensor active 94%, dram active 17%,
//   mem 2931/81559 MiB, 62C, 657.4/700 W (the activities on a GPU with GPM)
// 12:34:56.789012 gpu 0 pid 434 python: mem 2931 MiB, sm 99%
void append_gpu_text(fmt::memory_buffer& out, const GpuSnapshot& snap);

}  // namespace eacgm::exporting
