// Where a job's time went: its processes' host waits against their traced time, and its
// kernels' time on the GPU, summed from the rows Store::job_time_rows reads.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/host_wait_kinds.h"
#include "history/job_report.h"

namespace eacgm::history {
namespace {

constexpr double kNsPerS = 1e9;

// A process of a job: (job, node, pid, start_ns).
using ProcessOf = std::tuple<std::string, std::string, std::uint32_t, std::int64_t>;

// One function's calls of one process over the window. Time is the calls times the mean
// of the timed ones over the whole window (not interval by interval), so that a window
// gives the same time from the raw rows and from their rollups.
struct CallSums {
  std::uint64_t calls = 0, timed = 0, estimated = 0, sketch_count = 0, sketch_sum_ns = 0;
  void add(const FunctionSums& s) {
    calls += s.calls;
    timed += s.timed;
    estimated += s.estimated;
    sketch_count += s.latency.count;
    sketch_sum_ns += s.latency.sum_ns;
  }
  double seconds() const {
    if (sketch_count == 0) return 0;
    return static_cast<double>(calls) *
           (static_cast<double>(sketch_sum_ns) / static_cast<double>(sketch_count)) / kNsPerS;
  }
  bool scaled() const { return estimated > 0 || sketch_count < calls; }
};

struct JobTimeSums {
  std::map<std::string, JobWaitTime> waits;      // by kind
  std::map<std::string, JobKernelTime> kernels;  // by name
  bool gpu = false;
};

bool is_nccl_kernel(const std::string& name) { return name.rfind("nccl", 0) == 0; }

void finish(JobTime& t, JobTimeSums& sums, std::uint32_t top) {
  for (auto& [kind, w] : sums.waits) {
    t.host_wait_seconds += w.seconds;
    t.host_waits.push_back(std::move(w));
  }
  std::sort(t.host_waits.begin(), t.host_waits.end(), [](const JobWaitTime& a, const JobWaitTime& b) {
    return std::tie(b.seconds, a.kind) < std::tie(a.seconds, b.kind);
  });
  if (!sums.gpu) return;
  double gpu = 0, nccl = 0;
  for (auto& [name, k] : sums.kernels) {
    gpu += k.gpu_seconds;
    t.gpu_timed_launches += k.timed;
    if (is_nccl_kernel(name)) {
      nccl += k.gpu_seconds;
      t.nccl_timed_launches += k.timed;
    }
    t.top_kernels.push_back(std::move(k));
  }
  t.gpu_seconds = gpu;
  t.nccl_gpu_seconds = nccl;
  std::sort(t.top_kernels.begin(), t.top_kernels.end(), [](const JobKernelTime& a, const JobKernelTime& b) {
    return std::tie(b.gpu_seconds, b.launches, a.name) < std::tie(a.gpu_seconds, a.launches, b.name);
  });
  if (t.top_kernels.size() > top) t.top_kernels.resize(top);
}

}  // namespace

std::vector<std::string> host_wait_function_names() {
  std::vector<std::string> out;
  for (const auto& [base, kind] : host_wait_functions()) {
    for (const char* v2 : {"", "_v2"}) {
      for (const char* stream : {"", "_ptsz", "_ptds"}) out.push_back(std::string(base) + v2 + stream);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void add_job_times(std::vector<JobReportRow>& rows, const JobTimeRows& in, const HistoryQuery& q,
                   const ReportOptions& options) {
  std::map<std::string, JobReportRow*> by_job;
  for (JobReportRow& r : rows) by_job[r.job] = &r;

  // Each process once (a process may come in one row only, but a store may repeat it).
  std::set<ProcessOf> seen;
  for (const JobProcessLife& p : in.processes) {
    auto j = by_job.find(p.job);
    if (j == by_job.end() || !seen.insert({p.job, p.node, p.pid, p.start_ns}).second) continue;
    const std::int64_t from = std::max(p.first_ns, q.from_ns);
    const std::int64_t to = std::min(p.last_ns, q.to_ns);
    JobTime& t = j->second->time;
    ++t.processes;
    if (to > from) t.wall_seconds += static_cast<double>(to - from) / kNsPerS;
  }

  // Per process and function, then per job by wait kind and by kernel.
  std::map<std::pair<ProcessOf, std::pair<std::string, std::string>>, CallSums> calls;
  for (const JobFunctionRow& f : in.functions) {
    if (by_job.count(f.job) == 0) continue;
    calls[{{f.job, f.node, f.pid, f.start_ns}, {f.domain, f.function}}].add(f.sums);
  }
  std::map<std::string, JobTimeSums> sums;
  for (const auto& [key, c] : calls) {
    const std::string& job = std::get<0>(key.first);
    const auto& [domain, function] = key.second;
    JobTimeSums& s = sums[job];
    if (domain == kGpuTimeDomain) {
      s.gpu = true;
      JobKernelTime& k = s.kernels[function];
      k.name = function;
      k.launches += c.calls;
      k.timed += c.timed;
      k.gpu_seconds += c.seconds();
      continue;
    }
    const auto kind = wait_kind_of_function(function);
    if (!kind) continue;
    JobWaitTime& w = s.waits[std::string(host_wait_kind_name(*kind))];
    w.kind = host_wait_kind_name(*kind);
    w.calls += c.calls;
    w.seconds += c.seconds();
    w.estimated = w.estimated || c.scaled();
  }
  for (auto& [job, s] : sums) finish(by_job[job]->time, s, options.top_kernels);
}

}  // namespace eacgm::history
