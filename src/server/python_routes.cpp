// The Python hot spots routes, read from the source's newest snapshot.
#include "server/python_routes.h"

#include "analysis/python_profile.h"
#include "export/api_json.h"
#include "server/query_params.h"

namespace eacgm::server {

void add_python_routes(HttpServer& http, const std::shared_ptr<const SnapshotSource>& source) {
  http.route("/api/v1/python", [source](const Request& req) {
    auto pid = pid_param(req);
    if (!pid) return Response::json_error(400, pid.error());
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    return Response::json(exporting::api_python(*snap, *pid));
  });
  http.route("/api/v1/python/folded", [source](const Request& req) {
    auto pid = pid_param(req);
    if (!pid) return Response::json_error(400, pid.error());
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    Response r;
    if (const auto* python = snap->find<analysis::PythonHotSpots>())
      r.body = analysis::folded_text(*python, *pid);
    return r;
  });
}

}  // namespace eacgm::server
