// serve's history, from configuration to a writer.
#include "history/history_setup.h"

#include <unistd.h>

#include <cmath>

#include "core/build_info.h"
#include "history/store_url.h"
#include "sample/process_facts.h"

namespace eacgm::history {

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string("localhost");
}

Retention retention_of(const StoreConfig& c) {
  constexpr double kH = 3600e9;
  Retention r;
  r.raw_ns = static_cast<std::int64_t>(c.raw_hours * kH);
  r.minute_ns = static_cast<std::int64_t>(c.minute_days * 24 * kH);
  r.hour_ns = static_cast<std::int64_t>(c.hour_days * 24 * kH);
  r.max_bytes = c.max_bytes;
  return r;
}

Result<std::optional<HistorySetup>> resolve_history(const StoreConfig& config, const std::string& flag_url,
                                                    const std::string& flag_node,
                                                    const std::string& flag_fleet_url) {
  HistorySetup s;
  s.url = !flag_url.empty() ? flag_url : config.url;
  s.url_given = !s.url.empty();
  if (s.url == "off") return std::optional<HistorySetup>();
  if (s.url.empty()) s.url = std::string(kDefaultStoreUrl);
  auto parsed = parse_store_url(s.url);
  if (!parsed) return std::move(parsed).take_error();
  s.fleet_url = !flag_fleet_url.empty() ? flag_fleet_url : config.fleet_url;
  if (!s.fleet_url.empty()) {
    auto fleet = parse_store_url(s.fleet_url);
    if (!fleet) return make_error("fleet store: " + fleet.error());
    if (fleet->kind != StoreKind::kPostgres)
      return make_error("fleet store " + redact_store_url(s.fleet_url) +
                        ": must be postgresql://... (the fleet's database)");
    if (parsed->kind != StoreKind::kSqlite) {
      return make_error(
          "a fleet store ships from the node's own SQLite store: url must be sqlite:PATH (or "
          "unset), not " +
          redact_store_url(s.url));
    }
    s.local_path = parsed->target;
  }
  s.options.node = !flag_node.empty() ? flag_node : (!config.node.empty() ? config.node : host_name());
  s.options.interval =
      std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(config.interval_s * 1000)));
  s.options.retention = retention_of(config);
  s.options.spool_batches = config.spool_batches;
  return std::optional<HistorySetup>(std::move(s));
}

Result<std::shared_ptr<HistoryWriter>> make_history_writer(
    const HistorySetup& setup, HistoryWriter::Source source, HistoryWriter::Log log,
    std::shared_ptr<const sample::ProcessFacts> facts) {
  auto store = open_store(setup.url);
  if (!store) return std::move(store).take_error();
  if (!facts) facts = std::make_shared<sample::ProcFacts>();
  IntervalBuilder builder(std::move(facts), proc_start_ns, setup.idle_threshold);
  return std::make_shared<HistoryWriter>(std::move(store).value(), std::move(source), std::move(builder),
                                         setup.options, std::move(log));
}

std::unique_ptr<FleetShipper> make_fleet_shipper(const HistorySetup& setup, FleetShipper::Log log) {
  if (setup.fleet_url.empty()) return nullptr;
  FleetShipperOptions o;
  o.node = setup.options.node;
  o.local_path = setup.local_path;
  o.fleet_url = setup.fleet_url;
  o.retention = setup.options.retention;
  o.retention.max_bytes = 0;
  o.every = setup.options.maintain_every;
  return std::make_unique<FleetShipper>(std::move(o), std::move(log));
}

std::string fleet_store_url(const HistorySetup& setup) {
  return setup.fleet_url.empty() ? setup.url : setup.fleet_url;
}

std::unique_ptr<FleetLink> make_fleet_link(const HistorySetup& setup, FleetLink::Source source,
                                           FleetLink::Log log, const std::string& agent_url) {
  FleetLinkOptions o;
  o.node = setup.options.node;
  o.url = fleet_store_url(setup);
  o.interval = setup.options.interval;
  o.agent_url = agent_url;
  o.version = std::string(build_version());
  return std::make_unique<FleetLink>(std::move(o), std::move(source), std::move(log));
}

}  // namespace eacgm::history
