// The labels and JSON fields of a process's workload (sample/workload.h): dcgm-exporter's
// names for the pod (`pod`, `namespace`, `container`, `pod_uid`) and `job`/`job_step`
// for batch jobs. Only known fields are given: an empty one is left out.
#pragma once

#include <nlohmann/json.hpp>

#include "core/prometheus_text.h"
#include "sample/workload.h"

namespace eacgm::exporting {

void add_workload_labels(Labels& labels, const sample::Workload& w);

// The process document's fields: container_id, pod_uid, pod, namespace, container, job,
// job_step (null when unknown) and pod_gpus (the GPUs its container was given; [] when
// none).
void add_workload_fields(nlohmann::json& entry, const sample::Workload& w);
void add_workload_fields(nlohmann::ordered_json& entry, const sample::Workload& w);

}  // namespace eacgm::exporting
