// One GPU and one GPU process as JSON objects, the same in `eacgm gpu --json` and in the
// GPU lines of `eacgm trace` (docs/gpu.md): base units, null for what is not reported.
#pragma once

#include "core/gpu_sample.h"
#include "export/json_opt.h"

namespace eacgm::exporting {

// Insertion order: identity first, then metrics, as documented in docs/gpu.md.

json device_json(const DeviceSample& d);
json process_json(const ProcessSample& p);

}  // namespace eacgm::exporting
