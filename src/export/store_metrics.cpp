// The history store's families, from the writer's counters.
#include "export/store_metrics.h"

#include "export/metrics_table.h"

namespace eacgm::exporting {

void append_store_metrics(ExpositionWriter& out, const history::StoreStats& s) {
  begin_family(out, "eacgm_store_up");
  out.add({}, std::uint64_t{s.healthy ? 1u : 0u});
  begin_family(out, "eacgm_store_batches_written_total");
  out.add({}, s.batches_written);
  begin_family(out, "eacgm_store_rows_written_total");
  out.add({}, s.rows_written);
  begin_family(out, "eacgm_store_write_failures_total");
  out.add({}, s.write_failures);
  begin_family(out, "eacgm_store_spooled_batches");
  out.add({}, s.spooled_batches);
  begin_family(out, "eacgm_store_dropped_batches_total");
  out.add({}, s.batches_dropped);
  begin_family(out, "eacgm_store_dropped_rows_total");
  out.add({}, s.rows_dropped);
  begin_family(out, "eacgm_store_size_bytes");
  out.add({}, s.size_bytes);
  if (s.last_write_unix > 0) {
    begin_family(out, "eacgm_store_last_write_timestamp_seconds");
    out.add({}, s.last_write_unix);
  }
  // The clock against a PostgreSQL server: the store's, else the fleet store's.
  auto offset = s.clock_offset_seconds;
  auto uncertainty = s.clock_uncertainty_seconds;
  if (!offset && s.fleet) {
    offset = s.fleet->clock_offset_seconds;
    uncertainty = s.fleet->clock_uncertainty_seconds;
  }
  if (offset && uncertainty) {
    begin_family(out, "eacgm_store_clock_offset_seconds");
    out.add({}, *offset);
    begin_family(out, "eacgm_store_clock_uncertainty_seconds");
    out.add({}, *uncertainty);
  }
  if (s.link) {
    const history::FleetLinkStats& l = *s.link;
    begin_family(out, "eacgm_fleet_link_up");
    out.add({}, std::uint64_t{l.up ? 1u : 0u});
    begin_family(out, "eacgm_fleet_link_failures_total");
    out.add({}, l.failures);
    begin_family(out, "eacgm_fleet_link_standings_writes_total");
    out.add({}, l.standings_writes);
    begin_family(out, "eacgm_fleet_link_standings_reads_total");
    out.add({}, l.standings_reads);
    if (l.last_heartbeat_unix > 0) {
      begin_family(out, "eacgm_fleet_link_last_heartbeat_timestamp_seconds");
      out.add({}, l.last_heartbeat_unix);
    }
  }
  if (!s.fleet) return;
  const history::FleetStats& f = *s.fleet;
  begin_family(out, "eacgm_fleet_store_up");
  out.add({}, std::uint64_t{f.up ? 1u : 0u});
  begin_family(out, "eacgm_fleet_store_shipments_total");
  out.add({}, f.shipments);
  begin_family(out, "eacgm_fleet_store_rows_shipped_total");
  out.add({}, f.rows_shipped);
  begin_family(out, "eacgm_fleet_store_sent_bytes_total");
  out.add({}, f.bytes_sent);
  begin_family(out, "eacgm_fleet_store_failures_total");
  out.add({}, f.failures);
  begin_family(out, "eacgm_fleet_store_behind_seconds");
  out.add({}, f.behind_seconds);
  if (f.last_ship_unix > 0) {
    begin_family(out, "eacgm_fleet_store_last_shipment_timestamp_seconds");
    out.add({}, f.last_ship_unix);
  }
}

}  // namespace eacgm::exporting
