// [store]: the history `serve` keeps (docs/history.md): where, under which node name,
// how often, for how long and within what size.
#pragma once

#include <cstdint>
#include <string>

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::history {

struct StoreConfig {
  std::string url;           // "" : the default (sqlite:/var/lib/eacgm/eacgm.db); "off": none
  std::string node;          // every row's node; "" : the host name
  double interval_s = 10.0;  // one batch of rows each
  double raw_hours = 24.0;   // the intervals themselves
  double minute_days = 7.0;  // 1-minute rollups
  double hour_days = 90.0;   // 1-hour rollups, anomalies, leaks and processes
  std::uint64_t max_bytes = std::uint64_t{1} << 30;  // the store's size cap; 0 none
  std::uint32_t spool_batches = 360;                 // batches kept while the store is away
  // The fleet's PostgreSQL ("" none): the node keeps its own store (url) and ships its
  // rollups and facts there (history/fleet_shipper.h).
  std::string fleet_url;
};

// Adds [store] to the file's sections, read into `store`.
void add_store_section(ConfigSections& sections, StoreConfig& store);

}  // namespace eacgm::history
