// The Python hot spots routes, read from the published snapshot.
#include "cli/serve_python_routes.h"

#include "cli/query_params.h"
#include "export/api_json.h"

namespace eacgm::cli {

void add_python_routes(server::HttpServer& http,
                       const std::shared_ptr<const analysis::LiveAnalysis>& analysis) {
  http.route("/api/v1/python", [analysis](const server::Request& req) {
    auto pid = pid_param(req);
    if (!pid) return server::Response::json_error(400, pid.error());
    auto snap = analysis->snapshot();
    if (!snap) return server::Response::json_error(503, "no snapshot yet (the trace is starting)");
    return server::Response::json(exporting::api_python(*snap, *pid));
  });
  http.route("/api/v1/python/folded", [analysis](const server::Request& req) {
    auto pid = pid_param(req);
    if (!pid) return server::Response::json_error(400, pid.error());
    auto snap = analysis->snapshot();
    if (!snap) return server::Response::json_error(503, "no snapshot yet (the trace is starting)");
    server::Response r;
    if (snap->python) r.body = analysis::folded_text(*snap->python, *pid);
    return r;
  });
}

}  // namespace eacgm::cli
