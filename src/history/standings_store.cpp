// nccl_standings in each store (history/standings_sql.h): a node's rows replaced in one
// transaction, and read back for the job's verdict.
#include <fmt/format.h>

#include "history/postgres_store.h"
#include "history/sqlite_store.h"
#include "history/standings_sql.h"

namespace eacgm::history {

Status Store::write_standings(const std::string&, std::span<const analysis::RankReport>, std::int64_t) {
  return make_error(fmt::format("store {} keeps no NCCL standings", description()));
}

Result<std::vector<analysis::RankReport>> Store::standings(std::span<const std::uint64_t>, std::int64_t,
                                                           std::size_t) {
  return make_error(fmt::format("store {} keeps no NCCL standings", description()));
}

Status SqliteStore::write_standings(const std::string& node, std::span<const analysis::RankReport> rows,
                                    std::int64_t written_ns) {
  if (auto st = db_.exec("BEGIN IMMEDIATE"); !st) return st;
  auto fail = [this](const std::string& why) -> Status {
    (void)db_.exec("ROLLBACK");
    names_.clear();  // ids made in the transaction are gone with it
    return make_error(why);
  };
  auto node_id = name_id(node);
  if (!node_id) return fail(node_id.error());
  for (const analysis::RankReport& r : rows) {
    // The node's own clock: nothing to move, nothing uncertain.
    if (auto st = run(put_standing_sql(Dialect::kSqlite, *node_id, r, written_ns, 0, 0)); !st)
      return fail(st.error());
  }
  if (auto st = run(drop_unwritten_standings_sql(Dialect::kSqlite, *node_id, written_ns)); !st)
    return fail(st.error());
  if (auto st = db_.exec("COMMIT"); !st) return fail(st.error());
  return {};
}

Result<std::vector<analysis::RankReport>> SqliteStore::standings(std::span<const std::uint64_t> comm_ids,
                                                                 std::int64_t since_ns, std::size_t limit) {
  std::vector<analysis::RankReport> out;
  auto st = each_row(read_standings_sql(Dialect::kSqlite, comm_ids, since_ns, limit),
                     [&out](const SqliteStmt& s) { out.push_back(get_standing(s)); });
  if (!st) return std::move(st).take_error();
  return out;
}

Status PostgresStore::write_standings(const std::string& node, std::span<const analysis::RankReport> rows,
                                      std::int64_t written_ns) {
  if (auto st = ready(); !st) return st;
  if (auto st = resolve({node}); !st) return st;
  const std::int32_t node_id = id_of(node);
  // The starts go onto the server's clock: a sample of it with each write keeps the
  // offset's bound current (a failed sample leaves the last estimate).
  (void)sample_clock();
  const auto clock = clock_.best();
  const std::int64_t offset = clock ? clock->offset_ns : 0;
  const std::int64_t bound = clock ? clock->uncertainty_ns : -1;
  return in_transaction([&]() -> Status {
    for (const analysis::RankReport& r : rows) {
      if (auto st = exec(put_standing_sql(Dialect::kPostgres, node_id, r, written_ns, offset, bound)); !st)
        return st;
    }
    return exec(drop_unwritten_standings_sql(Dialect::kPostgres, node_id, written_ns));
  });
}

Result<std::vector<analysis::RankReport>> PostgresStore::standings(std::span<const std::uint64_t> comm_ids,
                                                                   std::int64_t since_ns, std::size_t limit) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto r = query(read_standings_sql(Dialect::kPostgres, comm_ids, since_ns, limit));
  if (!r) return std::move(r).take_error();
  std::vector<analysis::RankReport> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.push_back(get_standing(PgRow(*r, i)));
  return out;
}

}  // namespace eacgm::history
