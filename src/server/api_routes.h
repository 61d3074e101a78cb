// The daemon's /api/v1 routes (docs/api.md): one JSON document per route from one
// snapshot of the source (gpus, functions, counters, memory, kernels, nccl, processes,
// anomalies, series, python) and the live stream of an SSE channel.
#pragma once

#include <memory>

#include "export/api_json.h"
#include "server/http_server.h"
#include "server/job_stacks.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

// Adds the routes to `http` (before it starts). `options` says what the process
// documents carry beside the snapshot (rank, command line, container, exit). `stacks`:
// where `/api/v1/inflight?stacks=1` finds the job verdict's ranks' Python stacks (nullptr:
// no fleet store, so only this node's).
void add_api_routes(HttpServer& http, std::shared_ptr<const SnapshotSource> source,
                    const exporting::ApiOptions& options, std::shared_ptr<JobStacks> stacks = nullptr);

// Adds GET /api/v1/stream: `summary` events, and with `calls=1` (and `pid=P`) sampled
// `call` events, from `channel`.
void add_stream_route(HttpServer& http, std::shared_ptr<SseChannel> channel);

}  // namespace eacgm::server
