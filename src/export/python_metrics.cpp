// Python profile families for /metrics, named and described by metrics_table.
#include "export/python_metrics.h"

#include "export/metrics_table.h"

namespace eacgm::exporting {
void append_python_metrics(ExpositionWriter& out, const analysis::PythonHotSpots& hot) {
  if (hot.hz == 0) return;
  begin_family(out, "eacgm_python_profile_window_seconds");
  out.add({}, static_cast<double>(hot.window_ns) / 1e9);
  begin_family(out, "eacgm_python_profile_samples");
  out.add({}, hot.samples);
  begin_family(out, "eacgm_python_profile_processes");
  out.add({}, hot.processes.size());
  begin_family(out, "eacgm_python_profile_samples_over_cap_total");
  out.add({{"cap", "processes"}}, hot.over_cap.processes);
  out.add({{"cap", "rows"}}, hot.over_cap.rows);
  out.add({{"cap", "stacks"}}, hot.over_cap.stacks);
}

}  // namespace eacgm::exporting
