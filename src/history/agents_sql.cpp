// The SQL of agents (history/agents_sql.h).
#include "history/agents_sql.h"

#include <fmt/format.h>

namespace eacgm::history {

QuerySql put_agent_sql(Dialect d, std::int64_t node_id, const StoredAgent& a, std::int64_t offset_ns) {
  QuerySql s(d);
  // Each argument's place is its turn: one after another.
  const std::string node = s.arg(node_id);
  const std::string url = s.arg(a.url);
  const std::string version = s.arg(a.version);
  const std::string started = s.arg(a.started_ns + offset_ns);
  const std::string seen = s.arg(a.last_seen_ns + offset_ns);
  const std::string every = s.arg(a.every_ns);
  s.text = fmt::format(
      "INSERT INTO agents(node, url, version, started_ns, last_seen_ns, every_ns) VALUES({}, {}, {}, {}, {}, "
      "{}) "
      "ON CONFLICT(node) DO UPDATE SET url = excluded.url, version = excluded.version, started_ns = "
      "excluded.started_ns, last_seen_ns = excluded.last_seen_ns, every_ns = excluded.every_ns",
      node, url, version, started, seen, every);
  return s;
}

QuerySql read_agents_sql(Dialect d) {
  QuerySql s(d);
  s.text =
      "SELECT n.name, a.url, a.version, a.started_ns, a.last_seen_ns, a.every_ns FROM agents a JOIN names n "
      "ON "
      "n.id = a.node ORDER BY n.name";
  return s;
}

QuerySql read_node_clocks_sql(Dialect d) {
  QuerySql s(d);
  s.text =
      "SELECT n.name, c.measured_ns, c.offset_ns, c.uncertainty_ns FROM node_clocks c JOIN names n ON n.id = "
      "c.node ORDER BY n.name";
  return s;
}

QuerySql expire_agents_sql(Dialect d, std::int64_t before_ns) {
  QuerySql s(d);
  s.text = fmt::format("DELETE FROM agents WHERE last_seen_ns < {}", s.arg(before_ns));
  return s;
}

}  // namespace eacgm::history
