// A job report's rows in SQL, rendered for either store.
#include "history/job_report_sql.h"

#include <fmt/format.h>

namespace eacgm::history {
namespace {

// The selector on processes (alias p), " AND ...".
std::string selected(QuerySql& s, const JobSelector& selector) {
  switch (selector.by) {
    case JobSelector::By::kJob:
      return fmt::format(" AND p.job = {}", s.arg(selector.value));
    case JobSelector::By::kNamespace:
      return fmt::format(" AND p.namespace = {}", s.arg(selector.value));
    case JobSelector::By::kPod: {
      const auto slash = selector.value.find('/');
      if (slash == std::string::npos) return fmt::format(" AND p.pod = {}", s.arg(selector.value));
      const std::string ns = s.arg(selector.value.substr(0, slash));
      return fmt::format(" AND p.namespace = {} AND p.pod = {}", ns, s.arg(selector.value.substr(slash + 1)));
    }
    case JobSelector::By::kAll:
      break;
  }
  return " AND (p.job <> '' OR p.pod <> '')";
}

}  // namespace

QuerySql held_gpus_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector,
                       const WindowPlan& plan) {
  QuerySql s(d);
  const std::string ranges = ranges_cte(s, plan.ranges);
  const std::string alive = alive_in_window(s, q, "p");
  const std::string jobs = fmt::format(
      "jp AS (SELECT p.node, p.pid, p.start_ns, CASE WHEN p.job <> '' THEN p.job WHEN p.namespace <> '' THEN "
      "p.namespace || '/' || p.pod ELSE p.pod END AS job FROM processes p WHERE {}{})",
      alive, selected(s, selector));
  // Every process on the window's GPUs (a shared GPU's others too, for the shares), with
  // what all of a GPU's processes did in the interval together: a window over the rows
  // (a join with their GROUP BY would scan it once per row in SQLite).
  const std::string held = fmt::format(
      "g AS (SELECT t.tier, t.node, t.t_ns, t.span_ns, t.gpu, t.pid, t.start_ns, t.memory_max, "
      "t.sm_mean, t.samples, t.idle_samples, t.power_sum_w, COUNT(*) OVER w AS n, COUNT(t.sm_mean) OVER w AS "
      "n_sm, "
      "SUM(t.sm_mean) OVER w AS sm FROM {} WINDOW w AS (PARTITION BY t.tier, t.node, t.t_ns, t.gpu))",
      over_ranges(d, tables::kGpuProcesses.name));
  s.text = fmt::format(
      "{}, {}, {} SELECT jp.job, nn.name, g.gpu, g.t_ns, g.span_ns, g.pid, g.start_ns, g.memory_max, "
      "g.sm_mean, g.n, g.n_sm, g.sm, d.util_mean, d.sm_active_mean, d.tensor_active_mean, "
      "d.memory_total, d.power_mean_w, d.energy_mj, d.energy_counter_ns, g.samples, g.idle_samples, "
      "d.samples, g.power_sum_w FROM g JOIN jp ON jp.node = g.node AND jp.pid = g.pid AND jp.start_ns = "
      "g.start_ns "
      "JOIN names nn ON nn.id = g.node LEFT JOIN gpus d ON d.tier = g.tier AND d.node = g.node AND "
      "d.t_ns = g.t_ns AND d.gpu = g.gpu",
      ranges, jobs, held);
  return s;
}

}  // namespace eacgm::history
