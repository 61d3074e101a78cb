// One process's document, the probes' overhead and the GPU work per process, each read
// from the source's newest snapshot.
#include "server/process_routes.h"

#include "export/process_json.h"
#include "server/query_params.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

void add_process_routes(HttpServer& http, const std::shared_ptr<const SnapshotSource>& source) {
  http.route("/api/v1/process", [source](const Request& req) {
    auto pid = pid_param(req);
    if (!pid) return Response::json_error(400, pid.error());
    if (!*pid) return Response::json_error(400, "pid: required (a process id)");
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    return Response::json(exporting::api_process(*snap, **pid));
  });
  http.route("/api/v1/overhead", [source](const Request&) {
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    return Response::json(exporting::api_overhead(*snap));
  });
  http.route("/api/v1/work", [source](const Request&) {
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    return Response::json(exporting::api_work(*snap));
  });
}

}  // namespace eacgm::server
