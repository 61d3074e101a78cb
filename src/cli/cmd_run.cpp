// `eacgm run`: trace, then print a per-function summary (calls, errors, durations), what
// the GPUs and the traced processes on them did meanwhile, NCCL bandwidth and arrival
// skew, the memory the processes allocated and leaked, Python hot spots, the time the
// processes spent blocked on the host and the probes' estimated cost; as tables, or with --json as one JSON
// document (docs/report.md).
#include <cstdio>
#include <memory>

#include "analysis/anomaly_detector.h"
#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "analysis/gpu_times.h"
#include "analysis/gpu_work.h"
#include "analysis/host_waits.h"
#include "analysis/memory_ledger.h"
#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"
#include "analysis/python_profile.h"
#include "cli/commands.h"
#include "cli/hook_path.h"
#include "cli/trace_runner.h"
#include "core/probe_cost.h"
#include "export/anomaly_report.h"
#include "export/api_json.h"
#include "export/gpu_activity_table.h"
#include "export/gpu_time_table.h"
#include "export/gpu_work_table.h"
#include "export/host_waits_table.h"
#include "export/memory_table.h"
#include "export/nccl_table.h"
#include "export/overhead_report.h"
#include "export/python_hot_spots_table.h"
#include "export/summary_table.h"
#include "node/node_config.h"

namespace eacgm::cli {

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<TraceFlags>();
  flags->request.job = agent::TraceJob::kRun;
  auto* sub =
      app.add_subcommand("run", "trace (a command, pids, or everything), then print a per-function summary");
  add_trace_options(*sub, ctx, *flags);
  add_mode_option(*sub, flags->mode, "always-on");
  add_python_sampling_options(
      *sub, *flags,
      "sample the stacks of traced Python processes this many times a second on each CPU while they run "
      "(default 99, [python] sample_hz; 0: no Python hot spots)",
      "also write the sampled Python stacks to FILE as folded stacks (one \"frames count\" line each: "
      "flamegraph.pl, speedscope, inferno)");
  auto gpu_time = std::make_shared<bool>(false);
  sub->add_flag(
      "--gpu-time", *gpu_time,
      "preload libeacgm_hook.so into the command with GPU time on: kernels' and NCCL collectives' "
      "durations on the GPU from CUDA event pairs (1 launch in N per kernel, NCCL kernels all) and exact "
      "launch counts (docs/gpu-time.md)");
  auto private_driver = std::make_shared<bool>(false);
  sub->add_flag("--private-driver", *private_driver,
                "with --gpu-time: the command runs libcuda from a copy of its own (in /dev/shm, or "
                "$EACGM_PRIVATE_DRIVER's folder), which the driver's uprobes never reach; its launches are "
                "counted exactly by the hook instead, and its other driver calls are not seen "
                "(docs/gpu-time.md, \"Exact counts without the uprobes\")");
  auto json = std::make_shared<bool>(false);
  sub->add_flag(
      "--json", *json,
      "print one JSON document (functions, gpus, processes, memory, gpu_work, nccl, ops, "
      "python_hot_spots, overhead, waits, accounting; docs/report.md) instead of the tables; the traced "
      "command's stdout goes to stderr");
  sub->footer(
      "Example:\n  eacgm run -- python3 train.py\n  eacgm run --json -- python3 train.py > report.json");
  sub->final_callback([&ctx, flags, json, gpu_time, private_driver] {
    flags->apply();
    if (*private_driver && !*gpu_time) {
      print_error(
          "--private-driver needs --gpu-time (the hook's exact counts stand in for the driver's uprobes)");
      ctx.exit_code = 2;
      return;
    }
    if (*gpu_time) {
      if (flags->request.command.empty()) {
        print_error("--gpu-time needs a command to run (after --)");
        ctx.exit_code = 2;
        return;
      }
      auto hook = find_hook_library();
      Status set =
          hook ? preload_hook_for_children(*hook, *private_driver) : Status(std::move(hook).take_error());
      if (!set) {
        print_error(set.error());
        ctx.exit_code = 2;
        return;
      }
    }
    if (*json) flags->request.command_stdout_to_stderr = true;
    auto config = node::load_config(ctx.config_path);
    if (!config) {
      print_error(config.error());
      ctx.exit_code = 2;
      return;
    }
    auto consumers = agent::make_consumers(flags->request, config->agent, nullptr);
    ctx.exit_code = run_trace(config->agent, flags->request, consumers);
    // The final snapshot: published after the last calls and samples were in.
    if (auto snap = consumers.analysis->snapshot(); snap && snap->final) {
      const auto* python = snap->find<analysis::PythonHotSpots>();
      if (!flags->folded.empty() && python != nullptr && !write_folded(flags->folded, *python) &&
          ctx.exit_code == 0) {
        ctx.exit_code = 1;
      }
      if (*json) {
        std::fputs(exporting::run_report_json(*snap, exporting::ApiOptions{}).c_str(), stdout);
        std::fflush(stdout);
        return;
      }
      std::fputs(exporting::render_table(snap->get<analysis::CallSummary>()).c_str(), stdout);
      std::fputs(exporting::render_gpu_work(snap->get<analysis::GpuWorkStats>()).c_str(), stdout);
      std::fputs(exporting::render_gpu_time(snap->get<analysis::GpuTimeSummary>()).c_str(), stdout);
      std::fputs(exporting::render_nccl_table(snap->get<analysis::NcclStats>(),
                                              snap->get<analysis::NcclSkewSummary>())
                     .c_str(),
                 stdout);
      std::fputs(exporting::render_gpu_activity(snap->get<analysis::GpuActivity>()).c_str(), stdout);
      std::fputs(exporting::render_memory_table(snap->get<analysis::MemorySummary>()).c_str(), stdout);
      if (python != nullptr) std::fputs(exporting::render_python_hot_spots(*python).c_str(), stdout);
      std::fputs(exporting::render_anomalies(snap->get<analysis::AnomalySummary>()).c_str(), stdout);
      std::fputs(exporting::render_host_waits(snap->get<analysis::HostWaitSummary>()).c_str(), stdout);
      std::fputs(exporting::render_overhead(snap->get<OverheadReport>()).c_str(), stdout);
      std::printf("accounting: %s\n", snap->counters.accounting_line().c_str());
      std::fflush(stdout);
    }
  });
}

}  // namespace eacgm::cli
