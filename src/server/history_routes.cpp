// The history routes: parameters checked first, then the store's queries on a connection
// of the request's own (history/history_reader.h: no request waits for another).
#include "server/history_routes.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "export/agent_list.h"
#include "export/history_json.h"
#include "export/job_report.h"
#include "history/history_window.h"
#include "history/job_report_read.h"
#include "server/history_forward.h"
#include "server/query_params.h"

namespace eacgm::server {
namespace {

// The rows of a list's page when `limit` is not given.
constexpr std::size_t kDefaultPageRows = 100;

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
  q->limit = kDefaultPageRows;
  if (auto limit = req.param("limit")) {
    auto n = history::parse_limit(*limit);
    if (!n) return make_error(ErrorKind::kUsage, "limit: " + n.error());
    q->limit = *n;
  }
  // The next page of a list: its window is the first page's.
  if (auto cursor = req.param("cursor")) {
    if (auto st = history::apply_cursor(*cursor, *q); !st)
      return make_error(ErrorKind::kUsage, "cursor: " + st.error());
  }
  return q;
}

using Body = std::function<Result<std::string>(history::Store&, history::Tier, const history::HistoryQuery&)>;

// The document of one query of the store, from its rows.
template <class Rows, class Render>
Result<std::string> document(Result<Rows> rows, Render&& render) {
  if (!rows) return std::move(rows).take_error();
  return render(*rows);
}

// The report's jobs: `job`, `pod` or `namespace` (at most one), else every job.
Result<history::JobSelector> selector_of(const Request& req) {
  history::JobSelector selector;
  int given = 0;
  for (auto [name, by] :
       {std::pair{"job", history::JobSelector::By::kJob}, std::pair{"pod", history::JobSelector::By::kPod},
        std::pair{"namespace", history::JobSelector::By::kNamespace}}) {
    auto v = req.param(name);
    if (!v) continue;
    if (v->empty()) return make_error(ErrorKind::kUsage, std::string(name) + ": empty");
    selector = {by, *v};
    ++given;
  }
  if (given > 1) return make_error(ErrorKind::kUsage, "job, pod and namespace: give one of them");
  return selector;
}

// The reader that answers `req` (null: its node's agent answered, in `answered`).
std::shared_ptr<history::HistoryReader> reader_for(const Request& req, const history::HistoryQuery& q,
                                                   const std::shared_ptr<history::HistoryReader>& reader,
                                                   const HistoryForward* forward,
                                                   std::optional<Response>& answered) {
  if (!forward) return reader;
  auto route = forward->route_of(req, q);
  if (!route) {
    answered = Response::json_error(503, "history: " + route.error());
    return nullptr;
  }
  switch (route->source) {
    case HistorySource::kLocal:
      return reader;
    case HistorySource::kFleet:
      return forward->fleet();
    case HistorySource::kAgent:
      answered = forward->ask_agent(req, *q.node, route->known);
      return answered ? nullptr : reader;
  }
  return reader;
}

}  // namespace

void add_history_routes(HttpServer& http, std::shared_ptr<history::HistoryReader> reader,
                        const history::ReportOptions& report, std::shared_ptr<history::HistoryReader> fleet,
                        std::shared_ptr<const HistoryForward> forward) {
  auto route = [&](const char* path, Body body) {
    http.route(path, [reader, forward, body = std::move(body)](const Request& req) {
      if (!reader)
        return Response::json_error(404, "this agent keeps no history (serve --store, [store] url)");
      auto q = query_of(req);
      if (!q) return Response::json_error(400, q.error());
      std::optional<Response> answered;
      auto from = reader_for(req, *q, reader, forward.get(), answered);
      if (!from) return std::move(*answered);
      auto doc = from->query<std::string>(
          *q, [&](history::Store& store, history::Tier tier) { return body(store, tier, *q); });
      if (!doc) return Response::json_error(503, "history: " + doc.error());
      return Response::json(*doc);
    });
  };
  using history::HistoryQuery;
  using history::Store;
  using history::Tier;
  route("/api/v1/history/processes", [](Store& s, Tier tier, const HistoryQuery& q) {
    return document(s.processes(q, tier), [&](const history::ProcessPage& p) {
      return exporting::history_processes_json(q, tier, p);
    });
  });
  route("/api/v1/history/jobs", [report](Store& s, Tier tier, const HistoryQuery& q) {
    auto page = s.jobs(q, tier);
    if (!page) return Result<std::string>(std::move(page).take_error());
    auto usage = history::read_jobs_usage(s, q, tier, page->rows, report);
    return document(std::move(usage), [&](const std::vector<history::JobReportRow>& u) {
      return exporting::history_jobs_json(q, tier, *page, u);
    });
  });
  route("/api/v1/history/nodes", [](Store& s, Tier tier, const HistoryQuery& q) {
    return document(s.nodes(q, tier), [&](const history::Page<history::StoredNode>& p) {
      return exporting::history_nodes_json(q, tier, p);
    });
  });
  http.route("/api/v1/history/agents", [fleet = std::move(fleet)](const Request&) {
    if (!fleet) return Response::json_error(404, "this agent keeps no history (serve --store, [store] url)");
    auto doc = fleet->query<std::string>(history::HistoryQuery{}, [&](history::Store& s, history::Tier) {
      return document(s.agents(), [&](const history::AgentList& list) {
        return exporting::agents_json(list, s.description());
      });
    });
    if (!doc) return Response::json_error(503, "history: " + doc.error());
    return Response::json(*doc);
  });
  route("/api/v1/history/functions", [](Store& s, Tier tier, const HistoryQuery& q) {
    return document(s.functions(q, tier), [&](const std::vector<history::StoredFunction>& rows) {
      return exporting::history_functions_json(q, tier, rows);
    });
  });
  route("/api/v1/history/kernels", [](Store& s, Tier tier, const HistoryQuery& q) {
    return document(s.kernels(q, tier), [&](const std::vector<history::StoredKernel>& rows) {
      return exporting::history_kernels_json(q, tier, rows);
    });
  });
  route("/api/v1/history/gpus", [](Store& s, Tier tier, const HistoryQuery& q) {
    return document(s.gpus(q, tier), [&](const std::vector<history::StoredGpuPoint>& rows) {
      return exporting::history_gpus_json(q, tier, rows);
    });
  });
  route("/api/v1/history/anomalies", [](Store& s, Tier, const HistoryQuery& q) {
    auto anomalies = s.anomalies(q);
    if (!anomalies) return Result<std::string>(std::move(anomalies).take_error());
    // The first page of leaks beside any page of anomalies.
    HistoryQuery first = q;
    first.offset = 0;
    return document(s.leaks(first), [&](const history::Page<history::StoredLeak>& leaks) {
      return exporting::history_anomalies_json(q, *anomalies, leaks);
    });
  });
  http.route("/api/v1/history/report", [reader, report, forward](const Request& req) {
    if (!reader) return Response::json_error(404, "this agent keeps no history (serve --store, [store] url)");
    auto q = query_of(req);
    if (!q) return Response::json_error(400, q.error());
    auto selector = selector_of(req);
    if (!selector) return Response::json_error(400, selector.error());
    std::optional<Response> answered;
    auto from = reader_for(req, *q, reader, forward.get(), answered);
    if (!from) return std::move(*answered);
    history::JobReport doc{*q, history::Tier::kRaw, *selector, report, {}};
    auto rows =
        from->query<std::vector<history::JobReportRow>>(*q, [&](history::Store& s, history::Tier tier) {
          doc.tier = tier;
          return history::read_job_report(s, *q, *selector, tier, report);
        });
    if (!rows) return Response::json_error(503, "history: " + rows.error());
    doc.rows = std::move(rows).value();
    return Response::json(exporting::job_report_json(doc));
  });
  route("/api/v1/history/leaks", [](Store& s, Tier, const HistoryQuery& q) {
    return document(s.leaks(q), [&](const history::Page<history::StoredLeak>& leaks) {
      return exporting::history_leaks_json(q, leaks);
    });
  });
}

}  // namespace eacgm::server
