// GPU-time families for /metrics, named and described by metrics_table.
#include "export/gpu_time_metrics.h"

#include <cmath>
#include <vector>

#include "analysis/gpu_times.h"
#include "export/call_metrics.h"
#include "export/metrics_table.h"
#include "export/top_n_fold.h"

namespace eacgm::exporting {

void append_gpu_time_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                             std::size_t max_series) {
  std::vector<const analysis::GpuKernelNameTimes*> names;
  const analysis::GpuTimeSummary& times = snap.get<analysis::GpuTimeSummary>();
  names.reserve(times.names.size());
  for (const auto& n : times.names) names.push_back(&n);  // most GPU time first
  analysis::GpuKernelNameTimes other;
  other.name = "other";
  const std::uint64_t folded = fold_past_cap(names, max_series, [&](const analysis::GpuKernelNameTimes* n) {
    other.launches += n->launches;
    other.est_gpu_ns += n->est_gpu_ns;
    other.est_gpu_ci_ns = std::hypot(other.est_gpu_ci_ns, n->est_gpu_ci_ns);
    other.has_ci = other.has_ci || n->has_ci;
    (void)other.durations.merge(n->durations);  // same options: cannot fail
  });
  if (folded > 0) names.push_back(&other);

  begin_family(out, "eacgm_gpu_time_launches_total");
  for (const auto* n : names) out.add({{"kernel", n->name}}, n->launches);
  begin_family(out, "eacgm_gpu_time_kernel_duration_seconds");
  for (const auto* n : names) {
    const auto& d = n->durations;
    if (d.count() == 0) continue;
    out.add_histogram({{"kernel", n->name}}, fold_sketch(d), static_cast<double>(d.sum()) / 1e9, d.count());
  }
  begin_family(out, "eacgm_gpu_time_kernel_estimated_seconds");
  for (const auto* n : names) out.add({{"kernel", n->name}}, n->est_gpu_ns / 1e9);
  begin_family(out, "eacgm_gpu_time_kernel_estimated_ci95_seconds");
  for (const auto* n : names) {
    if (n->has_ci) out.add({{"kernel", n->name}}, n->est_gpu_ci_ns / 1e9);
  }
}

}  // namespace eacgm::exporting
