// `eacgm gpu`: what the GPUs report through NVML, device-wide and (--processes) per
// process, once or (--watch) every interval, as a table or JSON.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>

#include "cli/commands.h"
#include "cli/environment.h"
#include "cli/usage_errors.h"
#include "export/gpu_report.h"
#include "node/node_config.h"
#include "sample/gpu_sampler.h"
#include "sample/sampling_loop.h"

namespace eacgm::cli {
namespace {

// Exit codes, documented in docs/gpu.md.
constexpr int kExitOk = 0;
constexpr int kExitGpuFault = 1;  // a GPU is lost or could not be opened
constexpr int kExitNoNvml = 1;    // no NVML, or NVML init failed (a runtime failure)
constexpr int kExitUsage = 2;     // a bad configuration

struct GpuOptions {
  bool json = false;
  bool processes = false;
  bool watch = false;
  double interval_s = 0;  // 0: gpu.interval_s from the config (default 1 s)
  std::uint64_t count = 0;
};

int snapshot_status(const GpuSnapshot& s) {
  for (const DeviceSample& d : s.devices) {
    if (d.lost || !d.error.empty()) return kExitGpuFault;
  }
  return kExitOk;
}

void emit(const GpuSnapshot& s, const GpuOptions& o, bool clear_screen) {
  std::string text;
  if (o.json) {
    // --watch writes one object per line so that consumers can stream it.
    text = exporting::render_gpu_json(s, o.processes, o.watch ? -1 : 2);
  } else {
    if (clear_screen) text = "\033[H\033[2J";
    text += exporting::render_gpu_table(s, o.processes);
    if (o.watch && !clear_screen) text += '\n';
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// A failure before any sample: one line on stderr and, with --json, a JSON document on
// stdout that says why (a consumer of stdout would otherwise read nothing).
int fail(const GpuOptions& o, const std::string& why, const std::string& stderr_suffix, int code) {
  fmt::print(stderr, "eacgm: {}{}\n", why, stderr_suffix);
  if (o.json) {
    const std::string doc = exporting::render_gpu_error_json(why, o.processes, o.watch ? -1 : 2);
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    std::fflush(stdout);
  }
  return code;
}

int watch(sample::GpuSampler& sampler, const GpuOptions& o, std::chrono::nanoseconds interval) {
  const bool clear_screen = !o.json && isatty(STDOUT_FILENO);
  std::atomic<int> status{kExitOk};
  // Ctrl-C ends the watch after the pass in progress; the sampling thread inherits the
  // blocked mask, so only this thread takes the signal.
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
  auto loop = sample::SamplingLoop::start(
      {interval, o.count}, [&sampler] { return sampler.sample(); },
      [&](const GpuSnapshot& s) {
        emit(s, o, clear_screen);
        status = snapshot_status(s);
      });
  if (!loop) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return fail(o, loop.error(), "", kExitNoNvml);
  }
  const timespec tick{0, 20'000'000};
  while ((*loop)->running()) {
    if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) break;
  }
  (*loop)->stop();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (Status st = (*loop)->wait(); !st) {
    fmt::print(stderr, "eacgm: {}\n", st.error());
    return kExitGpuFault;
  }
  return status.load();
}

int run_gpu(const GpuOptions& o, const CommandContext& ctx) {
  auto loaded = node::load_config(ctx.config_path);
  if (!loaded) return fail(o, loaded.error(), "", kExitUsage);
  const double interval_s = o.interval_s > 0 ? o.interval_s : loaded->agent.gpu.interval_s;
  const auto interval =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(interval_s));

  sample::GpuSamplerOptions so;
  so.processes = o.processes;
  so.interval = std::chrono::duration_cast<std::chrono::microseconds>(interval);
  so.nvml_library = nvml_library_from_environment();
  so.gpm = loaded->agent.gpu.profiling;
  auto sampler = sample::GpuSampler::open(so);
  if (!sampler) return fail(o, sampler.error(), "; no GPU metrics", kExitNoNvml);
  if (!o.watch) {
    GpuSnapshot s = (*sampler)->sample();
    emit(s, o, false);
    return snapshot_status(s);
  }
  return watch(**sampler, o, interval);
}

}  // namespace

void add_gpu_command(CLI::App& app, CommandContext& ctx) {
  auto o = std::make_shared<GpuOptions>();
  auto* sub =
      app.add_subcommand("gpu", "GPU metrics from NVML, device-wide and per process (a compact nvidia-smi)");
  sub->add_option("--config", ctx.config_path,
                  "configuration file (TOML); uses gpu.interval_s and gpu.profiling");
  sub->add_flag("--json", o->json, "print JSON (one object; with --watch one object per line)");
  sub->add_flag("--processes", o->processes, "also list the processes on each GPU");
  sub->add_flag("--watch", o->watch, "refresh every interval until Ctrl-C (or --count)");
  sub->add_option("--interval", o->interval_s, "seconds between refreshes (default: gpu.interval_s, 1)")
      ->check(seconds_validator(false));
  sub->add_option("--count", o->count, "with --watch: stop after this many samples (implies --watch)")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  sub->final_callback([&ctx, o] {
    if (o->count > 0) o->watch = true;
    ctx.exit_code = run_gpu(*o, ctx);
  });
}

}  // namespace eacgm::cli
