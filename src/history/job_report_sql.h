// The SQL of a job report, the same in both stores: each process of the selected jobs on
// a GPU per interval (gpu_processes over the window's tier ranges), with the GPU's own
// row then and what every process on it did together, as get_held_gpu reads it.
#pragma once

#include "history/job_report.h"
#include "history/window_sql.h"

namespace eacgm::history {

QuerySql held_gpus_sql(Dialect d, const HistoryQuery& q, const JobSelector& selector, const WindowPlan& plan);

// job, node, gpu, t_ns, span_ns, pid, start_ns, memory_max, sm_mean, the GPU's process
// count, those with an SM share and their sum, then util_mean, sm_active_mean,
// tensor_active_mean, memory_total, power_mean_w, energy_mj, energy_counter_ns, the
// process's samples and idle samples, the GPU's samples, the GPU's power over the
// process's samples.
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
  return r;
}

}  // namespace eacgm::history
