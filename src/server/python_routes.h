// The daemon's Python hot spots routes (docs/api.md): /api/v1/python, the profile as
// JSON, and /api/v1/python/folded, its folded stacks (flame-graph input); `?pid=P` keeps
// one process.
#pragma once

#include <memory>

#include "server/http_server.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

void add_python_routes(HttpServer& http, const std::shared_ptr<const SnapshotSource>& source);

}  // namespace eacgm::server
