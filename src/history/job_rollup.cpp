// The job report's hour rollups in SQL, rendered for either store.
#include "history/job_rollup.h"

#include <fmt/format.h>

#include "history/job_report.h"

namespace eacgm::history {
namespace {

// Parameter `n`, numbered in both dialects (a query may use one twice).
std::string param(Dialect d, int n) { return fmt::format("{}{}", d == Dialect::kSqlite ? "?" : "$", n); }

}  // namespace

std::string job_rollup_delete_sql(Dialect d, const Table& t) {
  return fmt::format("DELETE FROM {} WHERE tier = 2 AND node = {} AND t_ns >= {} AND t_ns < {}", t.name,
                     param(d, 1), param(d, 2), param(d, 3));
}

std::string job_gpus_roll_sql(Dialect d) {
  // The GPU's counts are a window over its processes' rows of the hour, as a report over
  // the hour rows counts them (job_report_sql.cpp).
  return fmt::format(
      "INSERT INTO job_gpus ({}) SELECT 2, g.node, g.t_ns, g.span_ns, g.gpu, g.pid, g.start_ns, g.samples, "
      "g.memory_max, g.sm_mean, g.idle_samples, g.power_sum_w, COUNT(*) OVER w, COUNT(g.sm_mean) OVER w, "
      "SUM(g.sm_mean) OVER w, d.samples, d.util_mean, d.sm_active_mean, d.tensor_active_mean, "
      "d.memory_total, d.power_mean_w, d.energy_mj, d.energy_counter_ns, g.power_share_w FROM gpu_processes "
      "g LEFT JOIN gpus "
      "d ON d.tier = g.tier AND d.node = g.node AND d.t_ns = g.t_ns AND d.gpu = g.gpu WHERE g.tier = 2 AND "
      "g.node = {} AND g.t_ns >= {} AND g.t_ns < {} WINDOW w AS (PARTITION BY g.t_ns, g.gpu)",
      column_list(tables::kJobGpus), param(d, 1), param(d, 2), param(d, 3));
}

QuerySql job_calls_source_sql(Dialect d, std::int64_t node, std::int64_t from_ns, std::int64_t to_ns) {
  QuerySql s(d);
  const std::string n = s.arg(node);
  const std::string from = s.arg(from_ns);
  const std::string to = s.arg(to_ns);
  const std::string kept = waits_or_gpu_time(s);
  s.text = fmt::format(
      "SELECT t.t_ns, t.span_ns, t.pid, t.start_ns, t.domain, t.function, t.calls, t.timed, t.estimated, "
      "t.latency FROM functions t WHERE t.tier = 2 AND t.node = {} AND t.t_ns >= {} AND t.t_ns < {} AND {}",
      n, from, to, kept);
  return s;
}

std::string waits_or_gpu_time(QuerySql& s) {
  std::string waits;
  for (const auto& name : host_wait_function_names()) waits += (waits.empty() ? "" : ", ") + s.arg(name);
  const std::string gpu_time = s.arg(std::string(kGpuTimeDomain));
  return fmt::format(
      "(t.function IN (SELECT id FROM names WHERE name IN ({})) OR t.domain = (SELECT id FROM names WHERE "
      "name "
      "= {}))",
      waits, gpu_time);
}

std::string first_hour_row_sql(Dialect d) {
  const std::string n = param(d, 1);
  const char* least = d == Dialect::kSqlite ? "min" : "LEAST";
  // SQLite's min() of several arguments is NULL when one is: coalesce each.
  return fmt::format(
      "SELECT {0}(coalesce((SELECT min(t_ns) FROM gpu_processes WHERE tier = 2 AND node = {1}), {2}), "
      "coalesce((SELECT min(t_ns) FROM functions WHERE tier = 2 AND node = {1}), {2}))",
      least, n, "9223372036854775807");
}

}  // namespace eacgm::history
