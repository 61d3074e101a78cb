// The SQL of `agents` (schema.h, version 10), the same in both stores: a node's agent
// written over its row, every node's read back, and the rows of agents long gone deleted;
// and every node's clock of `node_clocks` (version 3) read back.
#pragma once

#include <cstdint>

#include "history/history_query.h"
#include "history/window_sql.h"

namespace eacgm::history {

// The agent of `node_id`, its times moved onto the store's clock by `offset_ns`.
QuerySql put_agent_sql(Dialect d, std::int64_t node_id, const StoredAgent& a, std::int64_t offset_ns);
// Every node's agent, by node; get_agent reads each.
QuerySql read_agents_sql(Dialect d);
// The agents last seen before `before_ns` (maintain()).
QuerySql expire_agents_sql(Dialect d, std::int64_t before_ns);

// Every node's row of node_clocks, by node; get_node_clock reads each.
QuerySql read_node_clocks_sql(Dialect d);

template <class In>
NodeClock get_node_clock(const In& in) {
  NodeClock c;
  c.node = in.text(0);
  c.estimate.measured_ns = in.i64(1);
  c.estimate.offset_ns = in.i64(2);
  c.estimate.uncertainty_ns = in.i64(3);
  return c;
}

template <class In>
StoredAgent get_agent(const In& in) {
  StoredAgent a;
  a.node = in.text(0);
  a.url = in.text(1);
  a.version = in.text(2);
  a.started_ns = in.i64(3);
  a.last_seen_ns = in.i64(4);
  a.every_ns = in.i64(5);
  return a;
}

}  // namespace eacgm::history
