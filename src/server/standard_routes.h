// The routes every `eacgm serve` answers (docs/api.md): /metrics with format
// negotiation, /healthz, /readyz. The daemon supplies what to write and when it is ready.
#pragma once

#include <functional>
#include <string>

#include "core/prometheus_text.h"
#include "server/http_server.h"

namespace eacgm::server {

struct StandardRoutes {
  // Writes every family of one scrape into the writer (in the negotiated format). Runs
  // on a worker thread, possibly on several at once: read published snapshots.
  std::function<void(ExpositionWriter&)> write_metrics;
  // Why the daemon is not ready yet (or any more); empty when ready. Unset: always ready.
  std::function<std::string()> not_ready_reason;
};

// Adds GET /metrics, /healthz and /readyz to `server` (before start()).
void add_standard_routes(HttpServer& server, StandardRoutes routes);

}  // namespace eacgm::server
