// Workload labels and fields (see workload_labels.h).
#include "export/workload_labels.h"

namespace eacgm::exporting {
namespace {

template <typename Json>
void fields(Json& entry, const sample::Workload& w) {
  auto opt = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
  entry["container_id"] = opt(w.container_id);
  entry["pod_uid"] = opt(w.pod_uid);
  entry["pod"] = opt(w.pod);
  entry["namespace"] = opt(w.namespace_);
  entry["container"] = opt(w.container);
  entry["job"] = opt(w.job);
  entry["job_step"] = opt(w.job_step);
  entry["pod_gpus"] = w.gpus;
}

}  // namespace

void add_workload_labels(Labels& labels, const sample::Workload& w) {
  auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) labels.push_back({name, value});
  };
  add("pod", w.pod);
  add("namespace", w.namespace_);
  add("container", w.container);
  add("pod_uid", w.pod_uid);
  add("job", w.job);
}

void add_workload_fields(nlohmann::json& entry, const sample::Workload& w) { fields(entry, w); }
void add_workload_fields(nlohmann::ordered_json& entry, const sample::Workload& w) { fields(entry, w); }

}  // namespace eacgm::exporting
