// SqliteStore: the history in one SQLite file on the node (WAL; one transaction per
// flush, so a killed agent loses at most the interval it was writing and the file opens
// clean). Latency sketches roll up inside SQL through an aggregate the connection
// registers (eacgm_merge).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "history/sqlite_db.h"
#include "history/store.h"

namespace eacgm::history {

struct RowPlace;
struct Table;

class SqliteStore final : public Store {
 public:
  // Creates the file (and its directory) when missing; migrates an older schema; refuses
  // a newer one.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path);

  Status write(const std::string& node, const IntervalBatch& batch) override;
  Status maintain(const std::string& node, std::int64_t now_ns, const Retention& retention) override;
  Result<std::vector<StoredProcess>> processes(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredFunction>> functions(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredKernel>> kernels(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredGpuPoint>> gpus(const HistoryQuery& q, Tier tier) override;
  Result<std::vector<StoredAnomaly>> anomalies(const HistoryQuery& q) override;
  Result<std::vector<StoredLeak>> leaks(const HistoryQuery& q) override;
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
  Result<std::int64_t> meta_int(const std::string& key, std::int64_t fallback);
  Status set_meta(const std::string& key, std::int64_t value);
  Status enforce_cap(const std::string& node, std::uint64_t max_bytes);
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
};

}  // namespace eacgm::history
