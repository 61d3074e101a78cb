// FleetShipper: with a fleet store ([store] fleet_url), what a node's own store (its
// SQLite file) has rolled up goes on to the fleet's PostgreSQL database: the minute and
// hour rows of the interval tables once maintenance made them (never the raw intervals),
// the job rollups, the processes, anomalies (hangs and GPU events among them) and leaks,
// and each shipment records the node's clock against the server's. The raw intervals
// stay on the node.
//
// How far each table went is kept in the local store's meta (`shipped_1m:NODE`,
// `shipped_1h:NODE`, `shipped_jobs:NODE`, `shipped_processes*:NODE`,
// `shipped_anomalies:NODE`, `shipped_leaks:NODE`) and moved on only once the fleet store
// committed the rows before it: a fleet store away for an hour, or an agent restarted,
// gets every row afterwards, oldest first, a bounded transaction at a time. A mark lost
// with a crash after the commit ships the rows again, which changes nothing there: a
// range of rolled rows replaces the same range, a process's row combines as a write's
// does, an event is added unless the same row is there. The fleet store keeps the marks
// its readers use (`rolled_1m:`, `rolled_1h:`, `rolled_jobs:`, `written_to:`,
// `shipped_to:`, `totals_from:` NODE), so its windows read the shipped rollups.
//
// A thread of its own: a slow or absent fleet store never holds up the node's writes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/result.h"
#include "history/history_writer.h"
#include "history/postgres_store.h"
#include "history/sqlite_db.h"
#include "history/store.h"

namespace eacgm::history {

struct FleetShipperOptions {
  std::string node;        // the node's name, in both stores
  std::string local_path;  // the node's SQLite file
  std::string fleet_url;   // the fleet's PostgreSQL
  // The fleet store's windows for the node's rows (its raw hours unused; no size cap).
  Retention retention;
  // A round at least this often (and one after each maintenance of the local store).
  std::chrono::milliseconds every{60'000};
  // The most one transaction carries: minutes of minute rows, hours of hour rows (and of
  // job rollups), rows of facts.
  std::int64_t minute_chunk_ns = 10LL * 60 * 1'000'000'000;
  std::int64_t hour_chunk_ns = 6LL * 3600 * 1'000'000'000;
  std::size_t fact_rows = 2000;
  // The shipper's clock (Unix ns); tests simulate it.
  std::function<std::int64_t()> now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
};

class FleetShipper {
 public:
  using Log = std::function<void(const std::string&)>;
  FleetShipper(FleetShipperOptions options, Log log);
  ~FleetShipper();
  FleetShipper(const FleetShipper&) = delete;
  FleetShipper& operator=(const FleetShipper&) = delete;

  void start();
  // A round soon (the local store was just maintained); any thread.
  void ship_soon();
  // Ends the thread after one last round (when the fleet store answered the one before).
  void stop();

  // One round, on the caller's thread (tests; the thread's own): every shipment due,
  // oldest first, until the local store has nothing more or one fails.
  Status ship_once();

  FleetStats stats() const;
  // The fleet store's URL without its password.
  std::string description() const;

 private:
  void run();
  Status open();
  Result<std::int64_t> local_meta(const std::string& key, std::int64_t fallback);
  // Sets the local marks in one transaction.
  Status set_local(const std::vector<std::pair<std::string, std::int64_t>>& marks);
  // The name of a local id (cached; names are never deleted).
  Result<std::string> name_of(std::int64_t id);
  // Rows of `t` that `where` keeps (`bind` binds its parameters), every column as its
  // type reads, names as their text; `lead`: an expression read before the columns, into
  // `leads` (a rowid).
  Status read_rows(const Table& t, const std::string& where, const std::function<void(SqliteStmt&)>& bind,
                   std::vector<ShippedRow>& rows, const std::string& lead = {},
                   std::vector<std::int64_t>* leads = nullptr);
  // The shipments of one tier's rows up to the local store's rollup mark.
  Status ship_tier(int tier, const char* rolled_key, const char* shipped_key, bool jobs,
                   std::int64_t chunk_ns);
  Status ship_processes();
  Status ship_events(const Table& t, const char* shipped_key);
  Status send(const Shipment& s, const std::vector<std::pair<std::string, std::int64_t>>& local_marks);

  FleetShipperOptions options_;
  Log log_;
  std::string description_;
  std::optional<SqliteDb> local_;
  std::unique_ptr<PostgresStore> fleet_;
  std::int64_t node_id_ = -1;  // in the local store
  std::unordered_map<std::int64_t, std::string> names_;

  bool failing_ = false;
  std::int64_t retry_at_ns_ = 0;
  std::int64_t backoff_ns_ = 0;

  mutable std::mutex mutex_;  // stats_ and the wake-ups
  FleetStats stats_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool soon_ = false;
  std::thread thread_;
};

}  // namespace eacgm::history
