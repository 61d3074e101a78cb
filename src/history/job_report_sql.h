// The SQL of a job report, the same in both stores: each process of the selected jobs on
// a GPU per interval (gpu_processes over the window's tier ranges, job_gpus over its hours
// already in the job rollups), with the GPU's own
// row then and what every process on it did together, as get_held_gpu reads it; and where
// the time went: the processes' lives and their rows of waits and GPU time.
#pragma once

#include "history/job_report.h"
#include "history/schema_rows.h"
#include "history/window_sql.h"

namespace eacgm::history {

// The ranges of a window a report reads from the job rollups (job_rollup.h), each node's
// hours before its mark: a tier of their own in the ranges, which no detailed row has.
inline constexpr int kJobRollupTier = 3;

// Over the rolled hours, the same columns from job_gpus; or, for a namespace with
// `namespace_rollup` (PostgreSQL), from namespace_gpus, each row of it with the combined
// columns that get_held_together reads after the others (NULL in the detailed rows).
QuerySql held_gpus_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector, const WindowPlan& plan,
                       bool namespace_rollup = false);

// job, node, gpu, t_ns, span_ns, pid, start_ns, memory_max, sm_mean, the GPU's process
// count, those with an SM share and their sum, then util_mean, sm_active_mean,
// tensor_active_mean, memory_total, power_mean_w, energy_mj, energy_counter_ns, the
// process's samples and idle samples, the GPU's samples, the GPU's power over the
// process's samples, and the process's share of it.
template <class In>
HeldGpuRow get_held_gpu(const In& in) {
  auto real = [&in](int col) { return in.is_null(col) ? std::nullopt : std::optional<double>(in.f64(col)); };
  auto count = [&in](int col) {
    return in.is_null(col) ? std::nullopt
                           : std::optional<std::uint64_t>(static_cast<std::uint64_t>(in.i64(col)));
  };
  HeldGpuRow r;
  r.job = in.text(0);
  r.node = in.text(1);
  r.gpu = static_cast<std::uint32_t>(in.i64(2));
  r.t_ns = in.i64(3);
  r.span_ns = in.i64(4);
  r.pid = static_cast<std::uint32_t>(in.i64(5));
  r.start_ns = in.i64(6);
  r.memory_max = count(7);
  r.sm_mean = real(8);
  r.gpu_processes = static_cast<std::uint64_t>(in.i64(9));
  r.gpu_processes_with_sm = static_cast<std::uint64_t>(in.i64(10));
  r.gpu_sm_sum = in.is_null(11) ? 0 : in.f64(11);
  r.util_mean = real(12);
  r.sm_active_mean = real(13);
  r.tensor_active_mean = real(14);
  r.memory_total = count(15);
  r.power_mean_w = real(16);
  r.energy_mj = real(17);
  if (!in.is_null(18)) r.energy_counter_ns = in.i64(18);
  r.samples = static_cast<std::uint64_t>(in.i64(19));
  r.idle_samples = count(20);
  r.gpu_samples = in.is_null(21) ? 0 : static_cast<std::uint64_t>(in.i64(21));
  r.power_sum_w = real(22);
  r.power_share_w = real(23);
  return r;
}

// The combined columns after get_held_gpu's (a row of namespace_gpus): processes, SM
// shares, memory, held, idle, energy part, energy share; none where NULL (a detailed row).
template <class In>
std::optional<HeldTogether> get_held_together(const In& in) {
  if (in.is_null(24)) return std::nullopt;
  HeldTogether t;
  t.processes = static_cast<std::uint64_t>(in.i64(24));
  t.sm_sum = in.f64(25);
  t.memory = static_cast<std::uint64_t>(in.i64(26));
  t.held = in.f64(27);
  if (!in.is_null(28)) t.idle = in.f64(28);
  t.energy = in.f64(29);
  if (!in.is_null(30)) t.energy_share = in.f64(30);
  return t;
}

// The selected jobs' processes alive in the window: job, node, pid, start_ns, first_ns,
// last_ns.
QuerySql job_lives_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector);
template <class In>
JobProcessLife get_job_life(const In& in) {
  JobProcessLife p;
  RowReader<In> reader{in};
  fields(reader, p.job, p.node, p.pid, p.start_ns, p.first_ns, p.last_ns);
  return p;
}

// Their rows of `functions` over the window's ranges outside the rollups (each node's cut to its processes'
// lives) whose function may be a wait (host_wait_function_names) or whose domain is the
// GPU time's: job, node, pid, start_ns, domain, function, then the function's sums.
QuerySql job_functions_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector,
                           const WindowPlan& plan);
template <class In>
JobFunctionRow get_job_function(const In& in) {
  JobFunctionRow f;
  RowReader<In> reader{in};
  fields(reader, f.job, f.node, f.pid, f.start_ns, f.domain, f.function);
  function_sums(f.sums, reader);
  return f;
}

// The same processes' sums of job_calls over the rolled hours, one row per process and
// function: job, node, pid, start_ns, domain, function, calls, timed, estimated, the
// latency's count and sum (all the report reads of a sketch).
QuerySql job_calls_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector, const WindowPlan& plan);
template <class In>
JobFunctionRow get_job_calls(const In& in) {
  JobFunctionRow f;
  RowReader<In> reader{in};
  fields(reader, f.job, f.node, f.pid, f.start_ns, f.domain, f.function, f.sums.calls, f.sums.timed,
         f.sums.estimated, f.sums.latency.count, f.sums.latency.sum_ns);
  return f;
}

}  // namespace eacgm::history
