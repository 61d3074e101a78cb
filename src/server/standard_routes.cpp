#include "server/standard_routes.h"

#include <memory>
#include <utility>

namespace eacgm::server {

void add_standard_routes(HttpServer& server, StandardRoutes routes) {
  auto shared = std::make_shared<const StandardRoutes>(std::move(routes));
  server.route("/metrics", [shared](const Request& req) {
    const auto format = negotiate_format(req.header("Accept"));
    ExpositionWriter writer(format);
    if (shared->write_metrics) shared->write_metrics(writer);
    Response r;
    r.content_type = std::string(content_type(format));
    r.body = writer.finish();
    return r;
  });
  server.route("/healthz", [](const Request&) {
    Response r;
    r.body = "ok\n";
    return r;
  });
  server.route("/readyz", [shared](const Request&) {
    const std::string reason = shared->not_ready_reason ? shared->not_ready_reason() : std::string();
    if (!reason.empty()) return Response::json_error(503, "not ready: " + reason);
    Response r;
    r.body = "ready\n";
    return r;
  });
}

}  // namespace eacgm::server
