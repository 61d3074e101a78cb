// GET /api/v1/history/{processes,jobs,nodes,functions,kernels,gpus,anomalies,leaks}: the
// store's rows over a window (`since`, or `from`/`to`; `step` for GPU points) and filters
// (`node`, `pid`, `comm`), for the UI and scripts; the lists that grow with the processes
// a page at a time (`limit`, `cursor`). /api/v1/history/report: the job report
// (`job`, `pod` or `namespace`; priced by `report`). /api/v1/history/agents: every node's
// agent in the fleet's store `fleet` (its API's URL, up or down since when). 404 while
// the daemon keeps no store. With `forward`, a request naming another node whose rows at
// the window's tier neither store keeps is answered by that node's agent
// (server/history_forward.h).
#pragma once

#include <memory>

#include "history/history_reader.h"
#include "server/history_forward.h"
#include "server/http_server.h"

namespace eacgm::server {

void add_history_routes(HttpServer& http, std::shared_ptr<history::HistoryReader> reader,
                        const history::ReportOptions& report = {},
                        std::shared_ptr<history::HistoryReader> fleet = nullptr,
                        std::shared_ptr<const HistoryForward> forward = nullptr);

}  // namespace eacgm::server
