// A job report's rows in SQL, rendered for either store.
#include "history/job_report_sql.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "history/job_rollup.h"

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
    case JobSelector::By::kJobs: {
      std::string in;
      for (const auto& v : selector.values) in += (in.empty() ? "" : ", ") + s.arg(v);
      return in.empty() ? " AND false" : fmt::format(" AND p.job IN ({})", in);
    }
    case JobSelector::By::kAll:
      break;
  }
  return " AND (p.job <> '' OR p.pod <> '')";
}

// "jp": the selected jobs' processes alive in the window, each with its job (the job id,
// else "namespace/pod") and its traced life.
std::string job_processes(QuerySql& s, const HistoryQuery& q, const JobSelector& selector) {
  const std::string alive = alive_in_window(s, q, "p");
  return fmt::format(
      "jp AS (SELECT p.node, p.pid, p.start_ns, p.first_ns, p.last_ns, CASE WHEN p.job <> '' THEN p.job WHEN "
      "p.namespace <> '' THEN p.namespace || '/' || p.pod ELSE p.pod END AS job FROM processes p WHERE {}{})",
      alive, selected(s, selector));
}

// The longest span of a rolled-up row: a row of a process's may start that long before
// the process's first interval.
constexpr std::int64_t kLongestSpanNs = 3600LL * 1'000'000'000;

// The ranges of the plan with each node's hours already in the job rollups as ranges of
// kJobRollupTier: no detailed rows match them, and "rr" reads them from the rollups.
std::vector<TierRange> job_ranges(const WindowPlan& plan) {
  const std::map<std::int32_t, std::int64_t> rolled(plan.jobs_rolled_to.begin(), plan.jobs_rolled_to.end());
  std::vector<TierRange> out;
  for (const TierRange& r : plan.ranges) {
    const auto it = rolled.find(r.node);
    const std::int64_t mark = it == rolled.end() || r.tier != 2 ? r.lo : std::clamp(it->second, r.lo, r.hi);
    if (mark > r.lo) out.push_back({r.node, kJobRollupTier, r.lo, mark});
    if (r.hi > mark) out.push_back({r.node, r.tier, mark, r.hi});
  }
  return out;
}

// The ranges `r`, the selected processes `jp`, "rj": each node's ranges cut to its
// selected processes' lives, so that a job on a few nodes for a few hours reads those
// nodes' rows of those hours, each range once by the key's (tier, node, t_ns), however
// many processes the node ran; and "rr": those of them in the rollups, as hour ranges.
std::string lived_ranges(QuerySql& s, const HistoryQuery& q, const JobSelector& selector,
                         const WindowPlan& plan) {
  const bool lite = s.dialect == Dialect::kSqlite;
  const std::string ranges = ranges_cte(s, job_ranges(plan));
  const std::string jobs = job_processes(s, q, selector);
  return fmt::format(
      "{}, {}, jn AS (SELECT node, MIN(first_ns) - {} AS lo, MAX(last_ns) AS hi FROM jp GROUP BY node), "
      "rj(tier, node, lo, hi) AS (SELECT r.tier, r.node, {}(r.lo, jn.lo), {}(r.hi, jn.hi) FROM r JOIN jn ON "
      "jn.node = r.node), rr(tier, node, lo, hi) AS (SELECT 2, node, lo, hi FROM rj WHERE tier = {})",
      ranges, jobs, s.arg(kLongestSpanNs), lite ? "max" : "GREATEST", lite ? "min" : "LEAST", kJobRollupTier);
}

}  // namespace

QuerySql held_gpus_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector, const WindowPlan& plan,
                       bool namespace_rollup) {
  QuerySql s(d);
  const std::string head = lived_ranges(s, q, selector, plan);
  const bool combined = namespace_rollup && selector.by == JobSelector::By::kNamespace;
  // Every process on those GPUs then (a shared GPU's others too, for the shares), with
  // what all of a GPU's processes did in the interval together: a window over the rows
  // (a join with their GROUP BY would scan it once per row in SQLite). A range holds an
  // interval's rows whole, so the counts are the GPU's.
  const std::string held = fmt::format(
      "g AS (SELECT t.tier, t.node, t.t_ns, t.span_ns, t.gpu, t.pid, t.start_ns, t.memory_max, "
      "t.sm_mean, t.samples, t.idle_samples, t.power_sum_w, t.power_share_w, COUNT(*) OVER w AS n, "
      "COUNT(t.sm_mean) OVER w AS "
      "n_sm, "
      "SUM(t.sm_mean) OVER w AS sm FROM {} WINDOW w AS (PARTITION BY t.tier, t.node, t.t_ns, t.gpu))",
      over_ranges(d, tables::kGpuProcesses.name, "rj"));
  s.text = fmt::format(
      "{}, {} SELECT jp.job, nn.name, g.gpu, g.t_ns, g.span_ns, g.pid, g.start_ns, g.memory_max, "
      "g.sm_mean, g.n, g.n_sm, g.sm, d.util_mean, d.sm_active_mean, d.tensor_active_mean, "
      "d.memory_total, d.power_mean_w, d.energy_mj, d.energy_counter_ns, g.samples, g.idle_samples, "
      "d.samples, g.power_sum_w, g.power_share_w{} FROM g JOIN jp ON jp.node = g.node AND jp.pid = g.pid AND "
      "jp.start_ns = "
      "g.start_ns "
      "JOIN names nn ON nn.id = g.node LEFT JOIN gpus d ON d.tier = g.tier AND d.node = g.node AND "
      "d.t_ns = g.t_ns AND d.gpu = g.gpu UNION ALL ",
      head, held,
      combined ? ", NULL::bigint, NULL::float8, NULL::bigint, NULL::float8, NULL::float8, NULL::float8, "
                 "NULL::float8"
               : "");
  if (!combined) {
    s.text += fmt::format(
        "SELECT jp.job, nn.name, t.gpu, t.t_ns, t.span_ns, t.pid, "
        "t.start_ns, t.memory_max, t.sm_mean, t.gpu_processes, t.gpu_processes_with_sm, t.gpu_sm_sum, "
        "t.util_mean, t.sm_active_mean, t.tensor_active_mean, t.memory_total, t.power_mean_w, t.energy_mj, "
        "t.energy_counter_ns, t.samples, t.idle_samples, t.gpu_samples, t.power_sum_w, t.power_share_w FROM "
        "{} "
        "JOIN jp ON "
        "jp.node = t.node AND jp.pid = t.pid AND jp.start_ns = t.start_ns JOIN names nn ON nn.id = t.node",
        over_ranges(d, tables::kJobGpus.name, "rr"));
    return s;
  }
  // The namespace's rows of its rolled hours, one per job's GPU-hour (namespace_rollup.h).
  s.text += fmt::format(
      "SELECT t.job, nn.name, t.gpu, t.t_ns, t.span_ns, 0, 0, NULL, NULL, t.gpu_processes, "
      "t.gpu_processes_with_sm, t.gpu_sm_sum, t.util_mean, t.sm_active_mean, t.tensor_active_mean, "
      "t.memory_total, t.power_mean_w, t.energy_mj, t.energy_counter_ns, 0, NULL, 0, NULL, NULL, "
      "t.processes, t.sm_sum, t.memory, t.held, t.idle, t.energy_part, t.energy_share FROM {} JOIN names nn "
      "ON nn.id = t.node WHERE "
      "t.namespace = {}",
      over_ranges(d, tables::kNamespaceGpus.name, "rr"), s.arg(selector.value));
  return s;
}

QuerySql job_lives_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector) {
  QuerySql s(d);
  s.text = fmt::format(
      "WITH {} SELECT jp.job, nn.name, jp.pid, jp.start_ns, jp.first_ns, jp.last_ns FROM jp JOIN names nn ON "
      "nn.id = jp.node",
      job_processes(s, q, selector));
  return s;
}

QuerySql job_functions_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector,
                           const WindowPlan& plan) {
  QuerySql s(d);
  const std::string head = lived_ranges(s, q, selector, plan);
  const std::string kept = waits_or_gpu_time(s);
  s.text = fmt::format(
      "{} SELECT jp.job, nn.name, jp.pid, jp.start_ns, dn.name, fn.name, t.calls, t.errors, t.bytes, "
      "t.timed, t.estimated, t.calls_variance, t.latency FROM {} JOIN jp ON jp.node = t.node AND jp.pid = "
      "t.pid AND jp.start_ns = t.start_ns JOIN names nn ON nn.id = t.node JOIN names dn ON dn.id = t.domain "
      "JOIN names fn ON fn.id = t.function WHERE {}",
      head, over_ranges(d, tables::kFunctions.name, "rj"), kept);
  return s;
}

QuerySql job_calls_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector,
                       const WindowPlan& plan) {
  QuerySql s(d);
  const std::string head = lived_ranges(s, q, selector, plan);
  s.text = fmt::format(
      "{} SELECT jp.job, nn.name, c.pid, c.start_ns, dn.name, fn.name, c.calls, c.timed, c.estimated, c.n, "
      "c.sum_ns FROM (SELECT t.node, t.pid, t.start_ns, t.domain, t.function, CAST(SUM(t.calls) AS "
      "BIGINT) AS calls, CAST(SUM(t.timed) AS BIGINT) AS timed, CAST(SUM(t.estimated) AS BIGINT) AS "
      "estimated, CAST(SUM(t.latency_count) AS BIGINT) AS n, CAST(SUM(t.latency_sum_ns) AS BIGINT) AS sum_ns "
      "FROM {} GROUP BY t.node, t.pid, t.start_ns, t.domain, t.function) c JOIN jp ON jp.node = c.node AND "
      "jp.pid = c.pid AND jp.start_ns = c.start_ns JOIN names nn ON nn.id = c.node JOIN names dn ON "
      "dn.id = c.domain JOIN names fn ON fn.id = c.function",
      head, over_ranges(d, tables::kJobCalls.name, "rr"));
  return s;
}

}  // namespace eacgm::history
