// The routes the web UI's process page and agent page read beside the others:
// /api/v1/process?pid=P, /api/v1/overhead and /api/v1/work (docs/api.md).
#pragma once

#include <memory>

#include "server/http_server.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

void add_process_routes(HttpServer& http, const std::shared_ptr<const SnapshotSource>& source);

}  // namespace eacgm::server
