// What each store keeps of a node (Store::node_keeping), read from the marks its writes
// and shipments leave in `meta`: `written_to:NODE` once the node's rows are there,
// `shipped_to:NODE` when they come rolled up from the node's own store.
#include <fmt/format.h>

#include "history/postgres_store.h"
#include "history/sqlite_store.h"
#include "history/window_sql.h"

namespace eacgm::history {
namespace {

// One row: how many of the two marks the node has (0 or 1 each).
QuerySql node_keeping_sql(Dialect d, const std::string& node) {
  QuerySql s(d);
  const std::string written = s.arg("written_to:" + node);
  const std::string shipped = s.arg("shipped_to:" + node);
  s.text = fmt::format(
      "SELECT (SELECT count(*) FROM meta WHERE key = {}), (SELECT count(*) FROM meta WHERE key = {})",
      written, shipped);
  return s;
}

template <class In>
NodeKeeping get_keeping(const In& in) {
  return NodeKeeping{in.i64(0) > 0, in.i64(1) > 0};
}

}  // namespace

Result<NodeKeeping> Store::node_keeping(const std::string& node) {
  return make_error(fmt::format("store {} cannot say what it keeps of node {}", description(), node));
}

Result<NodeKeeping> SqliteStore::node_keeping(const std::string& node) {
  NodeKeeping out;
  auto st = each_row(node_keeping_sql(Dialect::kSqlite, node),
                     [&out](const SqliteStmt& s) { out = get_keeping(s); });
  if (!st) return std::move(st).take_error();
  return out;
}

Result<NodeKeeping> PostgresStore::node_keeping(const std::string& node) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto r = query(node_keeping_sql(Dialect::kPostgres, node));
  if (!r) return std::move(r).take_error();
  if (r->rows() != 1) return make_error("reading the node's marks: no answer");
  return get_keeping(PgRow(*r, 0));
}

}  // namespace eacgm::history
