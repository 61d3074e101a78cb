// agents in each store (history/agents_sql.h): a node's agent written over its row, and
// every node's read back with the store's clock; the nodes' clocks read back.
#include <fmt/format.h>

#include <chrono>

#include "history/agents_sql.h"
#include "history/postgres_store.h"
#include "history/sqlite_store.h"

namespace eacgm::history {

Status Store::put_agent(const StoredAgent&) {
  return make_error(fmt::format("store {} keeps no agents", description()));
}

Result<AgentList> Store::agents() {
  return make_error(fmt::format("store {} keeps no agents", description()));
}

Result<std::vector<NodeClock>> Store::node_clocks() {
  return make_error(fmt::format("store {} keeps no clocks", description()));
}

Status SqliteStore::put_agent(const StoredAgent& agent) {
  auto node_id = name_id(agent.node);
  if (!node_id) return std::move(node_id).take_error();
  return run(put_agent_sql(Dialect::kSqlite, *node_id, agent, 0));
}

Result<AgentList> SqliteStore::agents() {
  AgentList out;
  // The file is written on the node's clock.
  out.now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  auto st = each_row(read_agents_sql(Dialect::kSqlite),
                     [&out](const SqliteStmt& s) { out.rows.push_back(get_agent(s)); });
  if (!st) return std::move(st).take_error();
  return out;
}

Result<std::vector<NodeClock>> SqliteStore::node_clocks() {
  // Written by PostgreSQL's writes only: a file on the node's own clock holds none.
  std::vector<NodeClock> out;
  auto st = each_row(read_node_clocks_sql(Dialect::kSqlite),
                     [&out](const SqliteStmt& s) { out.push_back(get_node_clock(s)); });
  if (!st) return std::move(st).take_error();
  return out;
}

Status PostgresStore::put_agent(const StoredAgent& agent) {
  if (auto st = ready(); !st) return st;
  if (auto st = sample_clock(); !st) return st;
  if (auto st = resolve({agent.node}); !st) return st;
  const auto clock = clock_.best();
  return exec(put_agent_sql(Dialect::kPostgres, id_of(agent.node), agent, clock ? clock->offset_ns : 0));
}

Result<AgentList> PostgresStore::agents() {
  if (auto st = ready(); !st) return std::move(st).take_error();
  AgentList out;
  auto now = conn_.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
  if (!now) return std::move(now).take_error();
  if (now->rows() != 1 || now->is_null(0, 0)) return make_error("reading the server's clock: no answer");
  out.now_ns = now->i64(0, 0) * 1000;
  auto r = query(read_agents_sql(Dialect::kPostgres));
  if (!r) return std::move(r).take_error();
  out.rows.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.rows.push_back(get_agent(PgRow(*r, i)));
  return out;
}

Result<std::vector<NodeClock>> PostgresStore::node_clocks() {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto r = query(read_node_clocks_sql(Dialect::kPostgres));
  if (!r) return std::move(r).take_error();
  std::vector<NodeClock> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.push_back(get_node_clock(PgRow(*r, i)));
  return out;
}

}  // namespace eacgm::history
