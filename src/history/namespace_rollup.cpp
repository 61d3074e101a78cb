// The namespace report's rollup in SQL (PostgreSQL).
#include "history/namespace_rollup.h"

#include <fmt/format.h>

#include "history/schema_sql.h"

namespace eacgm::history {

std::string namespace_delete_sql() {
  return "DELETE FROM namespace_gpus WHERE tier = 2 AND node = $1 AND t_ns >= $2 AND t_ns < $3";
}

std::string namespace_roll_sql(std::string_view where) {
  // Each process's part of the hour held and of its energy, as HeldInterval::add takes
  // them (part_of: the whole where a count is unknown); the SM shares and the energy
  // shares added up in the report's order of the processes, so that the sums are the same
  // to the last bit.
  constexpr const char* kHeld =
      "CASE WHEN coalesce(t.gpu_samples, 0) = 0 OR t.samples = 0 THEN 1.0::float8 ELSE LEAST(1.0::float8, "
      "t.samples::float8 / t.gpu_samples::float8) END";
  const std::string all_w = "(coalesce(t.power_mean_w, 0) * coalesce(t.gpu_samples, 0)::float8)";
  return fmt::format(
      "INSERT INTO namespace_gpus({0}) SELECT 2, t.node, t.t_ns, max(t.span_ns), p.namespace, CASE WHEN "
      "p.job <> '' THEN p.job ELSE p.namespace || '/' || p.pod END, t.gpu, count(*), sum(coalesce(t.sm_mean, "
      "0::float8) ORDER BY t.pid, t.start_ns), sum(coalesce(t.memory_max, 0))::bigint, max({1}), CASE WHEN "
      "bool_and(t.idle_samples IS NOT NULL AND coalesce(t.gpu_samples, 0) <> 0) THEN GREATEST(0::float8, "
      "max(LEAST(1.0::float8, t.idle_samples::float8 / NULLIF(t.gpu_samples, 0)::float8))) END, max(CASE "
      "WHEN t.power_sum_w IS NOT NULL AND {2} > 0 THEN LEAST(1.0::float8, t.power_sum_w / {2}) ELSE {1} "
      "END), max(t.gpu_processes), max(t.gpu_processes_with_sm), max(t.gpu_sm_sum), max(t.util_mean), "
      "max(t.sm_active_mean), max(t.tensor_active_mean), max(t.memory_total), max(t.power_mean_w), "
      "max(t.energy_mj), max(t.energy_counter_ns), CASE WHEN bool_and(t.power_share_w IS NOT NULL) AND "
      "max({2}) > 0 THEN sum(t.power_share_w / NULLIF({2}, 0) ORDER BY t.pid, t.start_ns) END "
      "FROM job_gpus t JOIN processes p ON p.node = t.node AND "
      "p.pid = t.pid AND p.start_ns = t.start_ns WHERE t.tier = 2 AND p.namespace <> '' AND {3} GROUP BY "
      "t.node, t.t_ns, p.namespace, 6, t.gpu",
      column_list(tables::kNamespaceGpus), kHeld, all_w, where);
}

std::string namespace_roll_node_sql() {
  return namespace_roll_sql("t.node = $1 AND t.t_ns >= $2 AND t.t_ns < $3");
}

}  // namespace eacgm::history
