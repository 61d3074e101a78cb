// The series caps of /metrics and /api/v1, byte for byte (golden/), on a snapshot made
// to cross every one: functions (with their bytes, nested and estimated calls and
// histograms), kernels, traced processes, the memory ledger, the probes' cost per
// process and host waits. The daemon's golden files stay far below the default caps, so
// this is where a fold's order, sums and counts are pinned down.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "analysis/host_waits.h"
#include "analysis/kernel_stats.h"
#include "analysis/live_analysis.h"
#include "analysis/memory_ledger.h"
#include "builtin_probe.h"
#include "core/probe_cost.h"
#include "export/api_json.h"
#include "export/call_metrics.h"

namespace eacgm::exporting {
namespace {

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, const char* comm,
               std::uint64_t dur_ns) {
  CallEvent e;
  e.pid = pid;
  e.tid = pid;
  std::snprintf(e.comm.data(), e.comm.size(), "%s", comm);
  e.probe = p;
  e.has_exit = true;
  e.dur_ns = dur_ns;
  e.nargs = static_cast<std::uint8_t>(p->spec.args.size());
  return e;
}

void set_arg(CallEvent& e, const char* name, std::uint64_t value) {
  const int i = arg_index(e.probe->spec, name);
  ASSERT_GE(i, 0) << e.probe->function << " has no argument " << name;
  e.args[static_cast<std::size_t>(i)] = value;
}

std::shared_ptr<const ProbeInfo> counted(const std::string& name) {
  auto p = std::make_shared<ProbeInfo>(*test::builtin_probe(name));
  p->counted = true;
  p->cycled = true;
  return p;
}

// Five traced processes. 102 and 103 make as many calls, and the ledger's 102 and 104
// hold as much memory, so that a cap between them shows ties keep their order.
analysis::AnalysisSnapshot snapshot() {
  auto sync = test::builtin_probe("cudaStreamSynchronize");
  auto launch = test::builtin_probe("cudaLaunchKernel");
  auto memcpy = test::builtin_probe("cudaMemcpy");
  auto memset = test::builtin_probe("cudaMemset");
  auto malloc = test::builtin_probe("cudaMalloc");
  auto driver_launch = counted("cuLaunchKernel");
  auto device_sync = counted("cudaDeviceSynchronize");

  std::vector<CallEvent> events;
  for (int i = 0; i < 5; ++i) events.push_back(call(sync, 101, "train", 1'000'000));
  // Kernels arrive in this order so that a table of three keeps k_c, k_a and k_d.
  // Launches 0-9 are pid 101's, 10-14 pid 102's, 15-19 pid 103's.
  const std::pair<const char*, int> kernels[] = {{"k_c", 4}, {"k_a", 6}, {"k_d", 3}, {"k_b", 4}, {"k_e", 3}};
  analysis::KernelStats small_table(analysis::KernelStats::Options{3, 16});
  int n = 0;
  for (const auto& [name, launches] : kernels) {
    for (int i = 0; i < launches; ++i, ++n) {
      const std::uint32_t pid = n < 10 ? 101 : (n < 15 ? 102 : 103);
      auto e = call(launch, pid, pid == 101 ? "train" : (pid == 102 ? "eval" : "load"), 5'000);
      e.kernel = name;
      small_table.add(e);
      events.push_back(e);
    }
  }
  for (int i = 0; i < 3; ++i) {
    auto e = call(memcpy, 102, "eval", 20'000);
    set_arg(e, "count", 4096u << i);
    set_arg(e, "kind", 1);
    if (i == 2) e.ret = 1;
    events.push_back(e);
  }
  for (int i = 0; i < 2; ++i) {
    auto e = call(memset, 103, "load", 10'000);
    set_arg(e, "count", 1000);
    events.push_back(e);
  }
  auto m = call(malloc, 103, "load", 4'000);
  set_arg(m, "size", 1 << 20);
  events.push_back(m);
  m.pid = m.tid = 104;
  std::snprintf(m.comm.data(), m.comm.size(), "tool");
  events.push_back(m);
  m.nested = true;
  events.push_back(m);

  analysis::LiveAnalysis live;
  live.set_process_alive([](std::uint32_t) { return true; });
  live.on_calls(events);
  CallCount c;
  c.pid = 105;
  c.probe = driver_launch;
  c.kernel = "k_z";
  c.calls = 40;
  c.estimated = true;
  c.variance = 16;
  CallCount untimed;
  untimed.pid = 105;
  untimed.probe = device_sync;
  untimed.calls = 2;
  const CallCount counts[] = {c, untimed};
  const CallTimings timings[] = {{105, driver_launch, 40, 10, 10 * 2'000, 0}};
  live.on_counts(counts, timings);
  live.on_end(CounterValues{});
  analysis::AnalysisSnapshot snap = *live.snapshot();
  snap.time = std::chrono::system_clock::time_point(std::chrono::seconds(1'790'000'000));
  snap.edit<analysis::KernelStats>() = small_table;

  auto ledger_row = [](std::uint32_t pid, const char* comm, std::int32_t device, std::uint64_t live_bytes,
                       std::uint64_t peak_bytes, bool exited) {
    analysis::MemoryLedgerRow r;
    r.pid = pid;
    r.comm = comm;
    r.device = device;
    r.live_bytes = live_bytes;
    r.peak_bytes = peak_bytes;
    r.exited = exited;
    return r;
  };
  snap.edit<analysis::MemorySummary>().rows = {
      ledger_row(101, "train", 0, 100, 200, false), ledger_row(102, "eval", 1, 300, 300, false),
      ledger_row(103, "load", 0, 900, 900, true), ledger_row(104, "tool", -1, 300, 400, false),
      ledger_row(105, "", 0, 50, 50, false)};

  snap.edit<OverheadReport>() = OverheadReport{};
  snap.edit<OverheadReport>().costs = {450, 900, 3000, 1400, true, true};
  snap.edit<OverheadReport>().duty_fraction = 0.5;
  auto overhead_row = [](std::uint32_t pid, bool exited, double ratio) {
    ProcessOverhead p;
    p.pid = pid;
    p.exited = exited;
    p.ratio = ratio;
    return p;
  };
  snap.edit<OverheadReport>().processes = {overhead_row(101, false, 0.01), overhead_row(102, false, 0.02),
                                           overhead_row(103, true, 0.5), overhead_row(104, false, 0.04),
                                           overhead_row(105, false, 0.03)};

  auto wait_row = [](std::uint32_t pid, const char* comm, HostWaitKind kind, std::uint64_t calls,
                     std::uint64_t total_ns) {
    analysis::HostWaitRow r;
    r.pid = pid;
    r.comm = comm;
    r.kind = kind;
    r.calls = calls;
    r.timed = calls;
    r.total_ns = total_ns;
    return r;
  };
  snap.edit<analysis::HostWaitSummary>() = analysis::HostWaitSummary{};
  snap.edit<analysis::HostWaitSummary>().rows = {
      wait_row(101, "train", HostWaitKind::kFutex, 5, 5'000'000),
      wait_row(102, "eval", HostWaitKind::kDeviceSync, 3, 9'000'000),
      wait_row(102, "eval", HostWaitKind::kFutex, 1, 1'000'000),
      wait_row(104, "tool", HostWaitKind::kInputWait, 2, 2'000'000),
      wait_row(105, "", HostWaitKind::kFutex, 1, 4'000'000)};
  return snap;
}

sample::RankInfo ranks(std::uint32_t pid) {
  sample::RankInfo r;
  if (pid == 101) {
    r.rank = 0;
    r.local_rank = 0;
    r.world_size = 2;
  }
  if (pid == 102) r.rank = 1;
  return r;
}

CallMetricsOptions caps(std::size_t functions, std::size_t processes, std::size_t histograms) {
  CallMetricsOptions o;
  o.max_function_series = functions;
  o.max_process_series = processes;
  o.max_histogram_series = histograms;
  return o;
}

std::string exposition(const analysis::AnalysisSnapshot& snap, const CallMetricsOptions& options) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_call_metrics(out, snap, options);
  return out.finish();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Each answer is its golden file's (golden/); EACGM_GOLDEN_UPDATE=1 rewrites them after
// an intended change.
TEST(SeriesCaps, EachFoldIsTheGoldenOne) {
  const auto snap = snapshot();
  CallMetricsOptions small = caps(2, 2, 1);  // every family folds; rank labels on
  small.rank_of_pid = ranks;
  ApiOptions api;
  api.max_processes = 3;
  const std::pair<const char*, std::string> answers[] = {
      {"folds_small_caps.txt", exposition(snap, small)},
      // The `other` function has a histogram; folded processes tie with a kept one.
      {"folds_other_histogram.txt", exposition(snap, caps(4, 3, 5))},
      // Caps met exactly (memory, overhead, waits) or just crossed; folded functions
      // without bytes; no histograms.
      {"folds_at_the_caps.txt", exposition(snap, caps(5, 4, 0))},
      // Nothing folds but the kernels the kernel table itself left out.
      {"folds_default_caps.txt", exposition(snap, CallMetricsOptions{})},
      {"api_processes_capped.json", api_processes(snap, api)},
      {"api_kernels_capped.json", api_kernels(snap, 2)},
      {"api_kernels_at_the_table_cap.json", api_kernels(snap, 3)},
  };
  const bool update = std::getenv("EACGM_GOLDEN_UPDATE") != nullptr;
  const std::string dir = std::string(EACGM_SOURCE_DIR) + "/tests/unit/export/golden/";
  for (const auto& [file, got] : answers) {
    if (update) {
      std::ofstream(dir + file, std::ios::binary) << got;
      continue;
    }
    const std::string want = read_file(dir + file);
    ASSERT_FALSE(want.empty()) << dir + file << " is missing";
    EXPECT_EQ(want, got) << file;
  }
}

}  // namespace
}  // namespace eacgm::exporting
