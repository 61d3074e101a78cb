// The node agent started for Python, and its report.
#include "pybind/node_handle.h"

#include "analysis/analysis_snapshot.h"
#include "core/trace_mode.h"
#include "export/api_json.h"

namespace eacgm::pybind {

Result<std::unique_ptr<node::NodeAgent>> start_node(const NodeArgs& args) {
  node::NodeOptions o;
  o.config_path = args.config_path;
  o.listen = args.listen;
  if (args.store) o.store = *args.store;
  o.request.probes = args.probes;
  o.request.sample_gpus = args.sample_gpus;
  o.request.search_path = args.search_path;
  o.request.nvml_library = args.nvml_library;
  o.request.duty = args.duty;
  if (!args.mode.empty()) {
    auto mode = parse_trace_mode(args.mode);
    if (!mode) {
      return make_error(ErrorKind::kUsage,
                        "mode \"" + args.mode + "\" is not one of \"per-call\", \"always-on\"");
    }
    o.request.mode = mode;
  }
  return node::start_in_background(std::move(o));
}

std::string node_report_json(const node::NodeAgent& agent) {
  auto snap = agent.snapshot();
  if (!snap) return "";
  return exporting::run_report_json(*snap, exporting::ApiOptions{});
}

}  // namespace eacgm::pybind
