// PostgresStore: the history of a fleet in one PostgreSQL database. Every node writes its
// rows (each carrying the node) through its own connection; the schema and its meaning
// are the SQLite store's. Batches go in with COPY, one transaction each; a batch whose
// interval is already there (a retry after a commit whose answer was lost) is not written
// twice. PostgreSQL cannot merge latency sketches without a C extension, so rollups and
// function queries merge them here. A lost connection fails the call (the writer spools
// and retries) and the next call connects again.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "history/pg_conn.h"
#include "history/shipment.h"
#include "history/store.h"
#include "history/window_sql.h"

namespace eacgm::history {

class PostgresStore final : public Store {
 public:
  // `conninfo`: a postgresql:// URL or a key=value string. A writer (kWrite) creates the
  // schema when the database has none; a reader finds no history there. Migrates an older
  // schema, refuses a newer one.
  static Result<std::unique_ptr<PostgresStore>> open(const std::string& conninfo,
                                                     StoreAccess access = StoreAccess::kWrite);

  Status write(const std::string& node, const IntervalBatch& batch) override;
  Status maintain(const std::string& node, std::int64_t now_ns, const Retention& retention) override;
  // Rows a node's own store made, shipped here (history/fleet_shipper.h), in one
  // transaction with the node's clock; a shipment written again changes nothing.
  Status ship(const std::string& node, const Shipment& shipment);
  // A shipping node's maintenance of this store: its rows past each tier's window go
  // (once an hour, every node's), no rollups (its own store made them) and no size cap.
  Status age_out(const std::string& node, std::int64_t now_ns, const Retention& retention);
  // The bytes handed to the server so far (PgConn::sent_bytes).
  std::uint64_t sent_bytes() const { return conn_.sent_bytes(); }
  Result<ProcessPage> processes(const HistoryQuery& q, Tier tier) override;
  Result<Page<StoredJob>> jobs(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<HeldGpuRow>> held_gpus(const HistoryQuery& q, const JobSelector& selector,
                                            Tier tier) override;
  Result<JobTimeRows> job_time_rows(const HistoryQuery& q, const JobSelector& selector, Tier tier) override;
  Result<Page<StoredNode>> nodes(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredFunction>> functions(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredKernel>> kernels(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredGpuPoint>> gpus(const HistoryQuery& q, Tier tier) override;
  Result<Page<StoredAnomaly>> anomalies(const HistoryQuery& q) override;
  Result<Page<StoredLeak>> leaks(const HistoryQuery& q) override;
  Status write_standings(const std::string& node, std::span<const analysis::RankReport> rows,
                         std::int64_t written_ns) override;
  Result<std::vector<analysis::RankReport>> standings(std::span<const std::uint64_t> comm_ids,
                                                      std::int64_t since_ns, std::size_t limit) override;
  Status put_agent(const StoredAgent& agent) override;
  Result<AgentList> agents() override;
  Result<std::vector<NodeClock>> node_clocks() override;
  Result<NodeKeeping> node_keeping(const std::string& node) override;
  // The tables' bytes on the server, indexes and TOAST included.
  Result<std::uint64_t> size_bytes() override;
  // The node's clock against the server's: the best of the last few writes' samples.
  std::optional<ClockEstimate> clock() const override { return clock_.best(); }
  std::string description() const override { return description_; }

 private:
  PostgresStore(PgConn conn, std::string description, StoreAccess access)
      : conn_(std::move(conn)), description_(std::move(description)), access_(access) {}
  // Connects again when the last call lost the connection.
  Status ready();
  Status migrate();
  // Ids of names (made when new, each in a short transaction of its own: names are
  // never deleted, and concurrent writers make them in one order).
  Status resolve(const std::set<std::string>& names);
  std::int32_t id_of(const std::string& name) const { return names_.at(name); }
  Result<std::int64_t> meta_int(const std::string& key, std::int64_t fallback);
  Status set_meta(const std::string& key, std::int64_t value);
  // One round trip reading the server's clock, between two readings of the node's.
  Status sample_clock();
  // The node's row of node_clocks, in the write's transaction (nothing before a sample).
  Status record_clock(std::int32_t node);
  Status write_rows(std::int32_t node, const IntervalBatch& b, bool merge_existing);
  Status roll_up(std::int32_t node, int to_tier, std::int64_t from_ns, std::int64_t to_ns,
                 std::int64_t span_ns);
  // Rolls up a table of latency sketches (functions, function_totals), merged here.
  Status roll_up_sketches(const Table& table, std::int32_t node, int to_tier, std::int64_t from_ns,
                          std::int64_t to_ns, std::int64_t span_ns);
  // The job report's rollups of the node's hours before `hours_to` (job_rollup.h), a day
  // at a time from its mark, and of one range of them.
  Status roll_up_jobs(std::int32_t node, const std::string& name, std::int64_t hours_to);
  Status roll_up_job_hours(std::int32_t node, std::int64_t from_ns, std::int64_t to_ns);
  Status apply_retention(std::int32_t node, std::int64_t now_ns, const Retention& retention);
  // The day tables of `tier` over [from_ns, to_ns) (schema_sql.h), made where missing: in
  // the caller's transaction if any, else in one of their own. Days made before by this
  // connection are not asked again.
  Status make_days(int tier, std::int64_t from_ns, std::int64_t to_ns);
  // Today's and the next days' tables of every tier, made ahead of the writes.
  Status make_days_ahead(std::int64_t now_ns);
  // Drops the day tables past each tier's retention.
  Status drop_days(std::int64_t now_ns, const Retention& retention);
  // A statement that makes or drops day tables, under kPartitionLockTimeoutMs: in the
  // caller's transaction if any (the session's timeout back after it), else in its own.
  Status partition_ddl(const std::string& sql, const PgParams& params);
  Status enforce_cap(std::int64_t now_ns, std::uint64_t max_bytes);
  // True when this call may do a fleet-wide task due every `period_ns` (one node does it).
  Result<bool> claim(const std::string& key, std::int64_t now_ns, std::int64_t period_ns);
  Status in_transaction(const std::function<Status()>& body);
  // A query and its arguments (window_sql.h).
  Result<PgResult> query(const QuerySql& sql);
  Status exec(const QuerySql& sql);
  // How a window of `tier` is read, for the nodes it asks (window_sql.h).
  Result<WindowPlan> plan(const HistoryQuery& q, Tier tier);

  static constexpr std::size_t kMaxCachedNames = 65536;
  PgConn conn_;
  std::string description_;
  StoreAccess access_;
  std::unordered_map<std::string, std::int32_t> names_;
  std::set<std::string> totals_marked_;               // nodes whose totals_from is set
  std::set<std::pair<int, std::int64_t>> days_made_;  // (tier, day) with their tables
  ClockEstimator clock_;
};

}  // namespace eacgm::history
