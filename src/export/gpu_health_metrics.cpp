// The GPU health events' counter (export/gpu_health_metrics.h).
#include "export/gpu_health_metrics.h"

#include "export/metrics_table.h"

namespace eacgm::exporting {

void append_gpu_health_metrics(ExpositionWriter& out, const analysis::GpuHealthSummary& health,
                               const GpuSystemInfo& system, const GpuMetricsOptions& options) {
  if (health.counts.empty()) return;
  begin_family(out, "eacgm_gpu_health_events_total");
  for (const analysis::GpuHealthCount& n : health.counts) {
    DeviceSample gpu;
    gpu.index = n.gpu;
    gpu.uuid = n.uuid;
    gpu.name = n.name;
    gpu.pci_bus_id = n.pci_bus_id;
    Labels labels = gpu_labels(gpu, system, options, LabelStyle::kEacgm);
    labels.push_back({"kind", n.kind});
    out.add(labels, n.events);
  }
}

}  // namespace eacgm::exporting
