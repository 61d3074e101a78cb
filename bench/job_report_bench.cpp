// The job report's query time on a day of a small fleet's history: `--nodes` nodes of 8
// GPUs each, one 10 s interval after another for `--hours`, GPU g of every node held by
// job g's process (busy the first half of each hour, idle the second), written by the
// real store code (SqliteStore, or PostgresStore with --store) and rolled up; then the
// report of every job and of one job over the whole window, from raw rows, 1-minute and
// 1-hour rollups, each the median of --repeat runs.
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

#include "history/job_report.h"
#include "history/store.h"

namespace {

using namespace eacgm::history;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kInterval = 10 * kS;
constexpr std::int64_t kT0 = 1793491200LL * kS;  // an hour boundary
constexpr int kGpus = 8;

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
                                               busy ? 0 : 10, *r.power_mean_w * 10});
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
  std::printf("%-8s %-10s %8s %6s %12s %10s\n", "tier", "selector", "rows", "jobs", "median ms", "gpu_hours");
  for (Tier tier : {Tier::kRaw, Tier::kMinute, Tier::kHour}) {
    for (const JobSelector& sel : {JobSelector{}, JobSelector{JobSelector::By::kJob, "job-3"}}) {
      std::vector<double> ms;
      std::size_t rows = 0;
      std::vector<JobReportRow> report;
      for (int r = 0; r < repeat; ++r) {
        const auto t0 = Clock::now();
        auto held = (*store)->held_gpus(q, sel, tier);
        if (!held) {
          std::fprintf(stderr, "report: %s\n", held.error().c_str());
          return 1;
        }
        rows = held->size();
        report = job_report_rows(std::move(held).value(), ReportOptions{});
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      std::printf("%-8s %-10s %8zu %6zu %12.1f %10.1f\n", tier_name(tier), selector_name(sel.by), rows,
                  report.size(), median_ms(ms), report.empty() ? 0.0 : report.front().gpu_hours);
    }
  }
  return 0;
}
