// The jobs' differences, in one file: default mode, Python sampling and its window, host
// waits, and which consumers each keeps.
#include "agent/trace_setup.h"

#include <utility>

#include "probe/catalog.h"

namespace eacgm::agent {
namespace {

// The sampled Python stacks of a trace, kept beside its output for the folded stacks at
// the end (the output has one line per call, and samples are not calls).
class PythonStacksKept final : public Consumer {
 public:
  explicit PythonStacksKept(std::shared_ptr<analysis::PythonProfile> profile)
      : profile_(std::move(profile)) {}
  void on_python_stacks(std::span<const PythonStack> stacks) override { profile_->add(stacks); }

 private:
  std::shared_ptr<analysis::PythonProfile> profile_;
};

// [hangs]' seconds (checked non-negative by the parser) in nanoseconds.
std::uint64_t seconds_to_ns(double s) { return s > 0 ? static_cast<std::uint64_t>(s * 1e9) : 0; }

bool samples_python(const TraceRequest& request) {
  return request.job != TraceJob::kTrace || request.python_stacks;
}

analysis::PythonProfileLimits profile_limits(const PythonConfig& python, bool windowed) {
  return analysis::python_profile_limits(python.window_s, python.max_rows, python.max_stacks, windowed);
}

}  // namespace

Result<std::vector<ProbeSpec>> select_probe_specs(const AgentConfig& config,
                                                  const std::vector<std::string>& probes) {
  std::vector<std::string> names = probes;
  if (names.empty()) {
    names = config.catalogs.empty() ? probe::default_catalog_names() : config.catalogs;
    for (const auto& s : config.probes) names.push_back(s.name);
  }
  auto specs = probe::select_specs(names, config.probes);
  if (!specs) return make_error(ErrorKind::kUsage, specs.error());
  return specs;
}

TraceMode trace_mode(const TraceRequest& request, const AgentConfig& config) {
  if (request.mode) return *request.mode;
  return config.trace.mode.value_or(request.job == TraceJob::kTrace ? TraceMode::kPerCall
                                                                    : TraceMode::kAlwaysOn);
}

std::uint32_t python_hz(const TraceRequest& request, const AgentConfig& config) {
  if (!samples_python(request)) return 0;
  return request.python_hz.value_or(config.python.sample_hz);
}

bool host_waits(const TraceRequest& request, const AgentConfig& config) {
  switch (request.job) {
    case TraceJob::kRun:
      return config.trace.host_waits.value_or(true);
    case TraceJob::kServe:
      // The tracepoints cost every system call of the machine: asked for only.
      return config.trace.host_waits.value_or(false);
    case TraceJob::kTrace:
      break;
  }
  return false;
}

AgentOptions agent_options(const TraceRequest& request, const AgentConfig& config) {
  AgentOptions ao;
  ao.config = config;
  ao.config.trace.mode = trace_mode(request, config);
  ao.probes = request.probes;
  ao.pids = request.pids;
  ao.command = request.command;
  ao.duration_s = request.duration_s;
  ao.btf_path = request.btf_path;
  ao.periodic_status = request.periodic_status;
  ao.side_command = request.side_command;
  ao.sample_gpus = request.sample_gpus;
  ao.command_stdout_to_stderr = request.command_stdout_to_stderr;
  ao.python_hz = python_hz(request, config);
  ao.host_waits = host_waits(request, config);
  ao.search_path = request.search_path;
  ao.nvml_library = request.nvml_library;
  ao.duty = request.duty;
  return ao;
}

void configure_analysis(analysis::LiveAnalysis& analysis, const TraceRequest& request,
                        const AgentConfig& config) {
  analysis::AnalysisSettings settings;
  settings.python_hz = python_hz(request, config);
  // The daemon keeps the stacks of the last minutes; a run keeps all of them.
  settings.python_limits = profile_limits(config.python, request.job == TraceJob::kServe);
  settings.inflight_min_age_ns = seconds_to_ns(config.hangs.min_age_s);
  settings.hang_after_ns = seconds_to_ns(config.hangs.hang_after_s);
  settings.flight_recorder_entries = config.nccl.flight_recorder_entries;
  analysis.configure(settings);
}

TraceConsumers make_consumers(const TraceRequest& request, const AgentConfig& config,
                              std::shared_ptr<Consumer> output,
                              std::shared_ptr<analysis::LiveAnalysis> analysis,
                              std::shared_ptr<CaptureRecorder> capture) {
  TraceConsumers made;
  std::vector<std::shared_ptr<Consumer>> members;
  if (request.job != TraceJob::kTrace) {
    made.analysis = analysis ? std::move(analysis) : std::make_shared<analysis::LiveAnalysis>();
    configure_analysis(*made.analysis, request, config);
    members.push_back(made.analysis);
  }
  if (output) members.push_back(std::move(output));
  if (request.job == TraceJob::kServe) {
    made.capture = capture ? std::move(capture) : std::make_shared<CaptureRecorder>();
    members.push_back(made.capture);
  }
  if (request.job == TraceJob::kTrace && request.python_stacks) {
    made.python = std::make_shared<analysis::PythonProfile>(python_hz(request, config),
                                                            profile_limits(config.python, false));
    members.push_back(std::make_shared<PythonStacksKept>(made.python));
  }
  if (members.size() == 1) {
    made.head = members.front();
  } else {
    auto list = std::make_shared<ConsumerList>();
    for (auto& m : members) list->add(std::move(m));
    made.head = std::move(list);
  }
  if (!request.comms.empty()) {
    made.filter = std::make_shared<analysis::CommFilter>(request.comms, std::move(made.head));
    made.head = made.filter;
  }
  return made;
}

}  // namespace eacgm::agent
