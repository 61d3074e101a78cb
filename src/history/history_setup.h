// What `serve` keeps, from [store] and its flags: the URL (default the node's SQLite
// file; "off" none), the node's name (default the host name), the interval, retention
// and the spool; and the writer made from them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "history/fleet_link.h"
#include "history/fleet_shipper.h"
#include "history/history_writer.h"
#include "history/store_config.h"
#include "sample/process_facts.h"

namespace eacgm::history {

struct HistorySetup {
  std::string url;
  bool url_given = false;  // named by --store or [store] url (else the default)
  HistoryOptions options;
  double idle_threshold = 0.05;  // [report]: a pass's activity under it is idle
  // The fleet's PostgreSQL ("" none) and, with it, the local SQLite file it ships from.
  std::string fleet_url;
  std::string local_path;
};

// nullopt: no history ("off"). `flag_url`, `flag_node` and `flag_fleet_url` override the
// config ("" not given). A fleet store must be PostgreSQL, and needs a local SQLite store.
Result<std::optional<HistorySetup>> resolve_history(const StoreConfig& config, const std::string& flag_url,
                                                    const std::string& flag_node,
                                                    const std::string& flag_fleet_url = {});
Retention retention_of(const StoreConfig& config);
std::string host_name();

// Opens the store and makes the writer over `source` (not started).
// `facts`: the processes' ranks, command lines and workloads (null: a ProcFacts of its own).
Result<std::shared_ptr<HistoryWriter>> make_history_writer(
    const HistorySetup& setup, HistoryWriter::Source source, HistoryWriter::Log log,
    std::shared_ptr<const sample::ProcessFacts> facts = nullptr);

// The shipper to the setup's fleet store (not started; it connects at its first round);
// null without one.
std::unique_ptr<FleetShipper> make_fleet_shipper(const HistorySetup& setup, FleetShipper::Log log);

// The fleet's store: the fleet store when there is one, else the node's own.
std::string fleet_store_url(const HistorySetup& setup);

// The link to the fleet's store (not started; it connects at its first round), for the
// agent whose API answers at `agent_url`.
std::unique_ptr<FleetLink> make_fleet_link(const HistorySetup& setup, FleetLink::Source source,
                                           FleetLink::Log log, const std::string& agent_url);

}  // namespace eacgm::history
