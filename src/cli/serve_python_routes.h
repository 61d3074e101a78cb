// `eacgm serve`'s Python hot spots routes (docs/api.md): /api/v1/python, the profile as
// JSON, and /api/v1/python/folded, its folded stacks (flame-graph input); `?pid=P` keeps
// one process.
#pragma once

#include <memory>

#include "analysis/live_analysis.h"
#include "server/http_server.h"

namespace eacgm::cli {

void add_python_routes(server::HttpServer& http,
                       const std::shared_ptr<const analysis::LiveAnalysis>& analysis);

}  // namespace eacgm::cli
