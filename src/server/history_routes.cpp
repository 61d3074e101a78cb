// The history routes: parameters checked first, then one query of the store.
#include "server/history_routes.h"

#include <chrono>
#include <functional>
#include <string>

#include "export/history_json.h"
#include "history/history_window.h"
#include "server/query_params.h"

namespace eacgm::server {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<history::HistoryQuery> query_of(const Request& req) {
  history::WindowText text;
  text.since = req.param("since");
  text.from = req.param("from");
  text.until = req.param("to");
  text.step = req.param("step");
  auto q = history::make_window(text, now_ns());
  if (!q) return q;
  if (auto node = req.param("node")) q->node = *node;
  if (auto comm = req.param("comm")) q->comm = *comm;
  auto pid = pid_param(req);
  if (!pid) return std::move(pid).take_error();
  if (*pid) q->pid = **pid;
  return q;
}

}  // namespace

void add_history_routes(HttpServer& http, std::shared_ptr<history::HistoryReader> reader) {
  using Body =
      std::function<Result<std::string>(history::Store&, history::Tier, const history::HistoryQuery&)>;
  auto route = [&](const char* path, Body body) {
    http.route(path, [reader, body = std::move(body)](const Request& req) {
      if (!reader)
        return Response::json_error(404, "this agent keeps no history (serve --store, [store] url)");
      auto q = query_of(req);
      if (!q) return Response::json_error(400, q.error());
      auto doc = reader->query<std::string>(
          *q, [&](history::Store& store, history::Tier tier) { return body(store, tier, *q); });
      if (!doc) return Response::json_error(503, "history: " + doc.error());
      return Response::json(*doc);
    });
  };
  route("/api/v1/history/processes",
        [](history::Store& s, history::Tier tier, const history::HistoryQuery& q) {
          auto rows = s.processes(q, tier);
          if (!rows) return Result<std::string>(std::move(rows).take_error());
          return Result<std::string>(exporting::history_processes_json(q, tier, *rows));
        });
  route("/api/v1/history/jobs", [](history::Store& s, history::Tier tier, const history::HistoryQuery& q) {
    auto rows = s.processes(q, tier);
    if (!rows) return Result<std::string>(std::move(rows).take_error());
    return Result<std::string>(exporting::history_jobs_json(q, tier, *rows));
  });
  route("/api/v1/history/functions",
        [](history::Store& s, history::Tier tier, const history::HistoryQuery& q) {
          auto rows = s.functions(q, tier);
          if (!rows) return Result<std::string>(std::move(rows).take_error());
          return Result<std::string>(exporting::history_functions_json(q, tier, *rows));
        });
  route("/api/v1/history/kernels", [](history::Store& s, history::Tier tier, const history::HistoryQuery& q) {
    auto rows = s.kernels(q, tier);
    if (!rows) return Result<std::string>(std::move(rows).take_error());
    return Result<std::string>(exporting::history_kernels_json(q, tier, *rows));
  });
  route("/api/v1/history/gpus", [](history::Store& s, history::Tier tier, const history::HistoryQuery& q) {
    auto rows = s.gpus(q, tier);
    if (!rows) return Result<std::string>(std::move(rows).take_error());
    return Result<std::string>(exporting::history_gpus_json(q, tier, *rows));
  });
  route("/api/v1/history/anomalies", [](history::Store& s, history::Tier, const history::HistoryQuery& q) {
    auto rows = s.anomalies(q);
    if (!rows) return Result<std::string>(std::move(rows).take_error());
    auto leaks = s.leaks(q);
    if (!leaks) return Result<std::string>(std::move(leaks).take_error());
    return Result<std::string>(exporting::history_anomalies_json(q, *rows, *leaks));
  });
}

}  // namespace eacgm::server
