// SqliteStore: the history in one SQLite file on the node (WAL; one transaction per
// flush, so a killed agent loses at most the interval it was writing and the file opens
// clean; readers, each on a connection of its own, block neither the writer nor each
// other). Latency sketches roll up inside SQL through an aggregate the connection
// registers (eacgm_merge). Queries: sqlite_queries.cpp.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "history/sqlite_db.h"
#include "history/store.h"
#include "history/window_sql.h"

namespace eacgm::history {

struct RowPlace;
struct Table;

class SqliteStore final : public Store {
 public:
  // kWrite creates the file (and its directory) when missing; kRead opens only a file
  // that is there. Migrates an older schema; refuses a newer one.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path,
                                                   StoreAccess access = StoreAccess::kWrite);

  Status write(const std::string& node, const IntervalBatch& batch) override;
  Status maintain(const std::string& node, std::int64_t now_ns, const Retention& retention) override;
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
  Result<std::uint64_t> size_bytes() override;
  std::string description() const override { return "sqlite:" + path_; }

 private:
  SqliteStore(SqliteDb db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
  Status migrate();
  // The id of a name in `names`, made when new (cached; the cache is dropped when a
  // transaction that may have made ids rolls back).
  Result<std::int64_t> name_id(std::string_view name);
  Status roll_up(std::int64_t node_id, int to_tier, std::int64_t from_ns, std::int64_t to_ns,
                 std::int64_t span_ns);
  // The job report's rollups of the node's hours before `hours_to` (job_rollup.h).
  Status roll_up_jobs(const std::string& node, std::int64_t node_id, std::int64_t hours_to);
  Result<std::int64_t> meta_int(const std::string& key, std::int64_t fallback);
  Status set_meta(const std::string& key, std::int64_t value);
  Status enforce_cap(const std::string& node, std::uint64_t max_bytes);
  // A query and its arguments (window_sql.h), each row handed to `fn` (sqlite_queries.cpp).
  Status each_row(const QuerySql& sql, const std::function<void(const SqliteStmt&)>& fn);
  Status run(const QuerySql& sql);
  // How a window of `tier` is read (window_sql.h).
  Result<WindowPlan> plan(const HistoryQuery& q, Tier tier);
  // The insert of one row of `t`, prepared once.
  Result<SqliteStmt*> insert_statement(const Table& t);
  template <class Rows>
  Status insert_rows(const Table& t, const RowPlace& at, const Rows& rows);

  static constexpr std::size_t kMaxCachedNames = 65536;
  SqliteDb db_;
  std::string path_;
  std::unordered_map<std::string, std::int64_t> names_;
  SqliteStmt insert_name_;
  SqliteStmt select_name_;
  std::unordered_map<std::string_view, SqliteStmt> inserts_;  // by table
  std::set<std::string> totals_marked_;                       // nodes whose totals_from is set
};

}  // namespace eacgm::history
