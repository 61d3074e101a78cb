// HistoryWriter: the history stage's thread. Each second it reads the newest published
// snapshot (for the GPU passes); each interval it makes the interval's rows and writes
// them in one transaction; each maintenance period it rolls up and applies retention.
// Never on the ring-buffer reader's thread. When the store fails (PostgreSQL down, a full
// disk, a read-only file) the batches wait in a bounded spool and are written, in order,
// when it answers again (with back-off); what the spool cannot hold is dropped and
// counted. stop() writes what is left, the final snapshot's rows included. What the
// agent writes and reads of the fleet while it runs (its heartbeat, the NCCL rank
// standings) is the fleet link's (history/fleet_link.h), on a connection of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "history/fleet_link.h"
#include "history/interval_builder.h"
#include "history/store.h"

namespace eacgm::history {

struct HistoryOptions {
  std::string node;                            // every row's node
  std::chrono::milliseconds interval{10'000};  // one batch each
  std::chrono::milliseconds maintain_every{60'000};
  Retention retention;
  std::size_t spool_batches = 360;  // an hour of 10 s intervals while the store is away
  // The writer's clock (Unix ns); tests simulate it.
  std::function<std::int64_t()> now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
};

// What /metrics says of the fleet store (eacgm_fleet_store_*).
struct FleetStats {
  bool up = false;                 // the last round shipped all it had
  std::uint64_t shipments = 0;     // transactions committed
  std::uint64_t rows_shipped = 0;  // rows in them
  std::uint64_t bytes_sent = 0;    // statements, parameters and COPY data sent
  std::uint64_t failures = 0;      // rounds that failed (each retried)
  double last_ship_unix = 0;       // 0: none yet
  double behind_seconds = 0;       // the local minute rollups not in the fleet store yet
  // The node's clock against the fleet server's, measured at each shipment.
  std::optional<double> clock_offset_seconds;
  std::optional<double> clock_uncertainty_seconds;
};

// What /metrics says of the store (eacgm_store_*).
struct StoreStats {
  std::uint64_t batches_written = 0;
  std::uint64_t rows_written = 0;
  std::uint64_t write_failures = 0;
  std::uint64_t batches_dropped = 0;
  std::uint64_t rows_dropped = 0;
  std::uint64_t spooled_batches = 0;  // waiting now
  std::uint64_t size_bytes = 0;       // at the last maintenance
  double last_write_unix = 0;         // 0: none yet
  bool healthy = true;                // the last write succeeded
  // The node's clock against the store's (PostgreSQL: the server's minus the node's),
  // and the bound on its error; absent until measured (SQLite: never).
  std::optional<double> clock_offset_seconds;
  std::optional<double> clock_uncertainty_seconds;
  // The shipping to a fleet store, when the node has one ([store] fleet_url).
  std::optional<FleetStats> fleet;
  // The fleet link's rounds with the fleet's store (history/fleet_link.h).
  std::optional<FleetLinkStats> link;
};

class HistoryWriter {
 public:
  using Source = std::function<std::shared_ptr<const analysis::AnalysisSnapshot>()>;
  using Log = std::function<void(const std::string&)>;

  HistoryWriter(std::unique_ptr<Store> store, Source source, IntervalBuilder builder, HistoryOptions options,
                Log log);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  void start();
  // Writes an interval now (SIGHUP), on the writer's thread.
  void flush_soon();
  // Writes the newest snapshot's rows and what is spooled, then returns.
  void stop();
  // The mode the rows were made under ("always-on", "per-call"); any thread.
  void set_mode(std::function<std::string()> mode) { mode_ = std::move(mode); }
  // Called on the writer's thread after each maintenance of the store (new rollups are
  // there: the fleet shipper's cue). Set before start().
  void set_after_maintain(std::function<void()> fn) { after_maintain_ = std::move(fn); }

  StoreStats stats() const;
  std::string description() const { return description_; }

  // One step of the thread's work, for tests that drive the writer without its thread:
  // a second's poll, or a flush (with maintenance when it is due).
  void poll_once();
  void flush_once(bool maintain);

 private:
  void run();
  void write_spool();

  std::unique_ptr<Store> store_;
  Source source_;
  IntervalBuilder builder_;
  HistoryOptions options_;
  Log log_;
  std::function<std::string()> mode_;
  std::function<void()> after_maintain_;
  std::string description_;

  std::deque<IntervalBatch> spool_;
  std::int64_t interval_start_ns_ = 0;
  std::int64_t last_maintain_ns_ = 0;
  std::int64_t retry_at_ns_ = 0;
  std::int64_t backoff_ns_ = 0;
  bool failing_ = false;
  bool size_read_ = false;

  mutable std::mutex mutex_;  // stats_ and the wake-ups
  StoreStats stats_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool flush_requested_ = false;
  std::thread thread_;
};

}  // namespace eacgm::history
