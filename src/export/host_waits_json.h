// Host waits as JSON (`eacgm run --json`'s "waits", docs/report.md): per traced process
// the time it spent blocked on the host in each wait kind.
#pragma once

#include "analysis/host_waits.h"
#include "export/gpu_json.h"

namespace eacgm::exporting {

// {"processes":[{"pid","comm","exited","wall_ns","waits":[{"kind","calls","timed",
//  "total_ns","estimated","share","p50_ns","p99_ns","max_ns"}]}],"kinds":[{"kind",
//  "calls","timed","p50_ns","p99_ns"}],"untracked":N,"exited_dropped":N}
json host_waits_json(const analysis::HostWaitSummary& waits);

}  // namespace eacgm::exporting
