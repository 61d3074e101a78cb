// The fleet dashboard's rollup of calls per job in SQL (PostgreSQL).
#include "history/job_functions_rollup.h"

#include <fmt/format.h>

#include "history/history_batch.h"
#include "history/schema_sql.h"

namespace eacgm::history {

std::string job_functions_delete_sql() {
  return "DELETE FROM job_functions WHERE tier = 2 AND node = $1 AND t_ns >= $2 AND t_ns < $3";
}

std::string job_functions_roll_sql(std::string_view where) {
  // One pass over the hour rows: GROUPING SETS gives the per-function rows and the job's
  // row (its domain and function NULL there, stored as 0) from the same scan.
  return fmt::format(
      "INSERT INTO job_functions({0}) SELECT 2, t.node, t.t_ns, max(t.span_ns), coalesce(p.job, ''), "
      "coalesce(t.domain, 0), coalesce(t.function, 0), CASE WHEN GROUPING(t.domain) = 0 THEN count(*) ELSE "
      "count(DISTINCT (t.pid, t.start_ns)) END, CASE WHEN GROUPING(t.domain) = 0 THEN sum(t.calls) ELSE "
      "coalesce(sum(t.calls) FILTER (WHERE t.domain IS DISTINCT FROM g.id), 0) END, CASE WHEN "
      "GROUPING(t.domain) = 0 THEN sum(t.errors) ELSE coalesce(sum(t.errors) FILTER (WHERE t.domain IS "
      "DISTINCT FROM g.id), 0) END FROM functions t LEFT JOIN processes p ON p.node = t.node AND p.pid = "
      "t.pid AND p.start_ns = t.start_ns LEFT JOIN (SELECT id FROM names WHERE name = '{1}') g ON true "
      "WHERE t.tier = 2 AND {2} GROUP BY GROUPING SETS ((t.node, t.t_ns, coalesce(p.job, ''), t.domain, "
      "t.function), (t.node, t.t_ns, coalesce(p.job, '')))",
      column_list(tables::kJobFunctions), kGpuTimeDomain, where);
}

std::string job_functions_roll_node_sql() {
  return job_functions_roll_sql("t.node = $1 AND t.t_ns >= $2 AND t.t_ns < $3");
}

}  // namespace eacgm::history
