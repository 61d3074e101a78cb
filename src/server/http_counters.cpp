// The HTTP server's and SSE channels' counters as eacgm_http_* and eacgm_sse_* entries of
// a CounterRegistry, with names and help from export/metrics_table.
#include "server/http_counters.h"

#include <string>
#include <string_view>

#include "export/metrics_table.h"
#include "server/sse_channel.h"

namespace eacgm::server {

namespace {

void add_counter(CounterRegistry& registry, std::string key, std::string_view metric,
                 const std::atomic<std::uint64_t>& value, CounterShow show = CounterShow::kHidden) {
  const auto* def = exporting::find_metric(metric);
  CounterDef d;
  d.key = std::move(key);
  d.metric = std::string(metric);
  d.help = def ? std::string(def->help) : std::string();
  d.kind = def && def->type == MetricType::kGauge ? CounterKind::kGauge : CounterKind::kCounter;
  d.show = show;
  registry.add(std::move(d), [&value] { return value.load(std::memory_order_relaxed); });
}

}  // namespace

void register_http_counters(CounterRegistry& registry, const HttpCounters& c) {
  add_counter(registry, "http_requests", "eacgm_http_requests_total", c.requests);
  add_counter(registry, "http_bad_requests", "eacgm_http_bad_requests_total", c.bad_requests,
              CounterShow::kNonZero);
  add_counter(registry, "http_unauthorized", "eacgm_http_unauthorized_total", c.unauthorized);
  add_counter(registry, "http_not_found", "eacgm_http_not_found_total", c.not_found);
  add_counter(registry, "http_method_not_allowed", "eacgm_http_method_not_allowed_total",
              c.method_not_allowed);
  add_counter(registry, "http_too_large", "eacgm_http_payload_too_large_total", c.too_large);
  add_counter(registry, "http_overloaded", "eacgm_http_overloaded_total", c.overloaded,
              CounterShow::kNonZero);
  add_counter(registry, "http_handler_errors", "eacgm_http_handler_errors_total", c.handler_errors,
              CounterShow::kNonZero);
  add_counter(registry, "http_active", "eacgm_http_active_connections", c.active_connections);
  add_counter(registry, "http_open", "eacgm_http_open_connections", c.connections.open);
  add_counter(registry, "http_header_timeouts", "eacgm_http_header_timeouts_total",
              c.connections.header_timeouts);
  add_counter(registry, "http_body_timeouts", "eacgm_http_body_timeouts_total", c.connections.body_timeouts);
  add_counter(registry, "http_idle_timeouts", "eacgm_http_idle_timeouts_total", c.connections.idle_timeouts);
  add_counter(registry, "http_shed", "eacgm_http_connections_shed_total", c.connections.shed,
              CounterShow::kNonZero);
}

void register_sse_counters(CounterRegistry& registry, const SseChannel& channel) {
  add_counter(registry, "sse_clients", "eacgm_sse_clients", channel.clients_now());
  add_counter(registry, "sse_published", "eacgm_sse_events_published_total", channel.published_total());
  add_counter(registry, "sse_dropped", "eacgm_sse_events_dropped_total", channel.dropped_total(),
              CounterShow::kNonZero);
}

}  // namespace eacgm::server
