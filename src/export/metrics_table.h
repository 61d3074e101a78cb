// Every metric family eacgm exposes on /metrics, declared once: the renderers take
// their names, types, help and units from here, and docs/metrics.md is generated from
// it (`eacgm-metrics-doc > docs/metrics.md`; a unit test fails when the file is stale).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/counter_registry.h"
#include "core/prometheus_text.h"

namespace eacgm::exporting {

// Which labels a family's series carry.
enum class LabelSet {
  kNone,
  kGpu,        // dcgm-exporter's GPU labels (see gpu_label_doc())
  kGpuLink,    // the GPU labels and `link` (an NVLink's number)
  kGpuKind,    // the GPU labels and `kind` (a GPU health event's kind)
  kProcess,    // pid, comm, gpu, UUID, container_id, rank, local_rank, world_size
  kFunction,   // domain, function
  kTraced,     // pid, comm, and rank, local_rank, world_size when known
  kFolded,     // kind (functions, processes, memory, nccl, waits)
  kLedger,     // pid, comm, cuda_device, and rank labels when known
  kKernel,     // kernel
  kNcclCall,   // comm_id, function
  kNcclComm,   // comm_id
  kNcclRank,   // comm_id, nccl_rank, pid
  kNcclSteps,  // comm_id, nccl_rank, nranks (when known), pid: where the rank stands
  kWaits,      // pid, comm, kind (a host-wait kind), and rank labels when known
  kWaitKind,   // kind (a host-wait kind)
  kPythonCap,  // cap (processes, rows, stacks)
  kTableName,  // table (activity, memory, history): a per-process table
  kBuild,      // version, commit, kernel, mode
  kHangRule,   // rule (communicator, age)
  kPodShare,   // gpu, uuid, pod, namespace, basis
};

enum class MetricGroup {
  kDcgm,
  kGpu,
  kProcess,
  kCalls,
  kNccl,
  kWaits,
  kInflight,
  kPython,
  kAgent,
  kStore,
  kHttp
};

struct MetricDef {
  std::string_view name;  // as exposed (Prometheus text)
  MetricType type;
  std::string_view unit;      // OpenMetrics base unit ("bytes", "ratio"), "" when none applies
  std::string_view doc_unit;  // the unit the value is in, for the docs ("MiB", "%", "W")
  std::string_view help;
  LabelSet labels;
  MetricGroup group;
  std::string_view source;  // where the value comes from, for the docs
};

// All families, in exposition order.
std::span<const MetricDef> metric_table();

// The family called `name`; nullptr when the table has none.
const MetricDef* find_metric(std::string_view name);

// The writer's description of a table entry.
FamilyDesc family_of(const MetricDef& def);
// Starts the family `name` as the table declares it (untyped and without help when the
// table lacks it).
void begin_family(ExpositionWriter& out, std::string_view name);

// Every counter of a CounterRegistry reading, one family each (its `metric` name,
// help, unit and kind; counters whose metric name is empty are skipped).
void append_counters(ExpositionWriter& out, const CounterValues& values);

// docs/metrics.md.
std::string render_metrics_doc();

}  // namespace eacgm::exporting
