// The job report's query time on a day of a small fleet's history: `--nodes` nodes of 8
// GPUs each, one 10 s interval after another for `--hours`, GPU g of every node held by
// job g's process (busy the first half of each hour, idle the second; each interval its
// synchronizations, launches and the GPU time of five kernels, one NCCL's), written by the
// real store code (SqliteStore, or PostgresStore with --store) and rolled up; then the
// report of every job and of one job over the whole window, from raw rows, 1-minute and
// 1-hour rollups, the held GPUs alone and with where the time went, each the median of
// --repeat runs.
//   build/bench/eacgm_bench_job_report [--store sqlite:/tmp/eacgm-bench-report.db]
//     [--nodes 4] [--hours 24] [--repeat 5]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/latency_sketch.h"
#include "history/job_report.h"
#include "history/job_report_read.h"
#include "history/store.h"

namespace {

using namespace eacgm::history;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kInterval = 10 * kS;
constexpr std::int64_t kT0 = 1793491200LL * kS;  // an hour boundary
constexpr int kGpus = 8;

// `calls` calls of `function`, `timed` of them taking `each_ns`.
FunctionRecord calls(ProcessKey key, const char* domain, std::string function, std::uint64_t calls,
                     std::uint64_t timed, std::uint64_t each_ns) {
  FunctionRecord f;
  f.process = key;
  f.domain = domain;
  f.function = std::move(function);
  f.calls = calls;
  f.timed = timed;
  eacgm::analysis::LatencySketch s;
  for (std::uint64_t i = 0; i < timed; ++i) s.add(each_ns + i * 1000);
  f.latency = stored(s);
  return f;
}

IntervalBatch interval(int node, std::int64_t t) {
  IntervalBatch b;
  b.t_ns = t;
  b.span_ns = kInterval;
  const bool busy = (t - kT0) % (3600 * kS) < 1800 * kS;
  for (int g = 0; g < kGpus; ++g) {
    ProcessRecord p;
    p.key = {static_cast<std::uint32_t>(1000 + g), kT0 - 100 * kS};
    p.comm = "train";
    p.job = fmt::format("job-{}", g);
    p.rank = node * kGpus + g;
    p.first_ns = t;
    p.last_ns = t + kInterval;
    b.processes.push_back(p);
    GpuRecord r;
    r.index = static_cast<std::uint32_t>(g);
    r.uuid = fmt::format("GPU-{}-{}", node, g);
    r.name = "NVIDIA H100";
    r.samples = 10;
    r.util_mean = busy ? 98.0 : 0.0;
    r.sm_active_mean = busy ? 0.9 : 0.0;
    r.tensor_active_mean = busy ? 0.6 : 0.0;
    r.memory_used_max = 60ULL << 30;
    r.memory_total = 80ULL << 30;
    r.power_mean_w = busy ? 650.0 : 90.0;
    r.energy_mj = *r.power_mean_w * 10'000;
    r.energy_counter_ns = kInterval;
    b.gpus.push_back(r);
    b.gpu_processes.push_back(GpuProcessRecord{r.index, p.key, 10, 60ULL << 30, busy ? 95.0 : 0.0,
                                               busy ? 0 : 10, *r.power_mean_w * 10, *r.power_mean_w * 10});
    b.functions.push_back(calls(p.key, "cudart", "cudaStreamSynchronize", 20, 20, 2'000'000));
    b.functions.push_back(calls(p.key, "cudart", "cudaMemcpy", 4, 4, 500'000));
    b.functions.push_back(calls(p.key, "cudart", "cudaLaunchKernel", 500, 500, 4'000));
    b.functions.push_back(calls(p.key, "cudart", "cudaMemcpyAsync", 20, 20, 8'000));
    for (int k = 0; k < 4; ++k)
      b.functions.push_back(
          calls(p.key, kGpuTimeDomain, fmt::format("kernel_{}", k), 100, 10, 100'000 * (k + 1)));
    b.functions.push_back(
        calls(p.key, kGpuTimeDomain, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, 10, 900'000));
  }
  return b;
}

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string url = "sqlite:/tmp/eacgm-bench-report.db";
  int nodes = 4, repeat = 5;
  double hours = 24;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--store") url = argv[i + 1];
    if (a == "--nodes") nodes = std::atoi(argv[i + 1]);
    if (a == "--hours") hours = std::atof(argv[i + 1]);
    if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
  }
  if (url.rfind("sqlite:", 0) == 0) std::filesystem::remove(url.substr(7));
  auto store = open_store(url);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().c_str());
    return 1;
  }
  const std::int64_t end = kT0 + static_cast<std::int64_t>(hours * 3600) * kS;
  const auto w0 = Clock::now();
  for (std::int64_t t = kT0; t < end; t += kInterval) {
    for (int n = 0; n < nodes; ++n) {
      if (auto st = (*store)->write(fmt::format("node-{:02}", n), interval(n, t)); !st) {
        std::fprintf(stderr, "write: %s\n", st.error().c_str());
        return 1;
      }
    }
  }
  // Retention long enough to keep every tier of the simulated day.
  Retention keep;
  keep.raw_ns = keep.minute_ns = keep.hour_ns = 365LL * 24 * 3600 * kS;
  keep.max_bytes = 0;
  for (int n = 0; n < nodes; ++n) {
    if (auto st = (*store)->maintain(fmt::format("node-{:02}", n), end + 3600 * kS, keep); !st) {
      std::fprintf(stderr, "maintain: %s\n", st.error().c_str());
      return 1;
    }
  }
  const double write_s = std::chrono::duration<double>(Clock::now() - w0).count();
  std::printf("%s: %d nodes x %d GPUs, %.0f h of 10 s intervals written and rolled up in %.1f s\n",
              (*store)->description().c_str(), nodes, kGpus, hours, write_s);
  HistoryQuery q;
  q.from_ns = kT0;
  q.to_ns = end;
  std::printf("%-8s %-10s %8s %9s %6s %10s %10s %10s %8s\n", "tier", "selector", "rows", "fn rows", "jobs",
              "held ms", "+time ms", "gpu_hours", "wait s");
  for (Tier tier : {Tier::kRaw, Tier::kMinute, Tier::kHour}) {
    for (const JobSelector& sel : {JobSelector{}, JobSelector{JobSelector::By::kJob, "job-3", {}}}) {
      std::vector<double> held_ms, time_ms;
      std::size_t rows = 0, fn_rows = 0;
      std::vector<JobReportRow> report;
      for (int r = 0; r < repeat; ++r) {
        for (ReportParts parts : {ReportParts::kHeld, ReportParts::kHeldAndTime}) {
          const auto t0 = Clock::now();
          auto got = read_job_report(**store, q, sel, tier, ReportOptions{}, parts);
          if (!got) {
            std::fprintf(stderr, "report: %s\n", got.error().c_str());
            return 1;
          }
          report = std::move(got).value();
          (parts == ReportParts::kHeld ? held_ms : time_ms)
              .push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
      }
      if (auto held = (*store)->held_gpus(q, sel, tier)) rows = held->size();
      if (auto time = (*store)->job_time_rows(q, sel, tier)) fn_rows = time->functions.size();
      std::printf("%-8s %-10s %8zu %9zu %6zu %10.1f %10.1f %10.1f %8.1f\n", tier_name(tier),
                  selector_name(sel.by), rows, fn_rows, report.size(), median_ms(held_ms), median_ms(time_ms),
                  report.empty() ? 0.0 : report.front().gpu_hours,
                  report.empty() ? 0.0 : report.front().time.host_wait_seconds);
    }
  }
  return 0;
}
