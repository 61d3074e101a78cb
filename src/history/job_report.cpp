// A job's GPU-hours, activity, idle stretches, energy share and cost, summed from the
// rows of its processes on GPUs, one interval of one GPU at a time.
#include "history/job_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace eacgm::history {
namespace {

constexpr double kNsPerHour = 3600e9;
constexpr double kMjPerKwh = 3.6e9;

// The bases a job's intervals used, said in a fixed order.
struct Bases {
  std::set<std::string> seen;
  std::string joined(const std::vector<std::string>& order) const {
    std::string out;
    for (const auto& b : order) {
      if (seen.count(b) == 0) continue;
      out += (out.empty() ? "" : "+") + b;
    }
    return out.empty() ? "none" : out;
  }
};

// One GPU over one interval, as the job's processes on it held it.
struct HeldInterval {
  std::int64_t t_ns = 0, span_ns = 0;
  std::uint64_t processes = 0;      // the job's
  double sm_sum = 0;                // their SM shares
  std::uint64_t memory = 0;         // their memory together
  const HeldGpuRow* gpu = nullptr;  // the GPU's columns (the same in each of its rows)
  // The parts of the span held and held idle: the most of any of the job's processes (the
  // union of their passes is not stored; a job's processes on one GPU mostly overlap).
  // No idle part where a row has no idle passes counted.
  double held = 0;
  std::optional<double> idle = 0.0;
  // The part of the interval's energy drawn in the held passes: the GPU's power over them
  // against its power over all of its passes; the held part where a row has no power sum.
  double energy = 0;
  // The job's processes' shares of the interval's energy pass by pass, added up: the
  // split that `energy` and share_of() approximate where a row has none.
  std::optional<double> split = 0.0;
  void add(const HeldGpuRow& r);
};

// The part of an interval `n` of its `of` passes stand for; the whole where unknown.
double part_of(std::uint64_t n, std::uint64_t of) {
  if (of == 0 || n == 0) return 1.0;
  return std::min(1.0, static_cast<double>(n) / static_cast<double>(of));
}

void HeldInterval::add(const HeldGpuRow& r) {
  if (r.together) {
    const HeldTogether& t = *r.together;
    processes += t.processes;
    sm_sum += t.sm_sum;
    memory += t.memory;
    held = std::max(held, t.held);
    energy = std::max(energy, t.energy);
    split = split && t.energy_share ? std::optional<double>(*split + *t.energy_share) : std::nullopt;
    if (idle) idle = t.idle ? std::optional<double>(std::max(*idle, *t.idle)) : std::nullopt;
    return;
  }
  ++processes;
  sm_sum += r.sm_mean.value_or(0);
  memory += r.memory_max.value_or(0);
  held = std::max(held, part_of(r.samples, r.gpu_samples));
  const double all_w = r.power_mean_w.value_or(0) * static_cast<double>(r.gpu_samples);
  energy = std::max(energy, r.power_sum_w && all_w > 0 ? std::min(1.0, *r.power_sum_w / all_w)
                                                       : part_of(r.samples, r.gpu_samples));
  split = split && r.power_share_w && all_w > 0 ? std::optional<double>(*split + *r.power_share_w / all_w)
                                                : std::nullopt;
  if (!idle) return;
  if (!r.idle_samples || r.gpu_samples == 0) {
    idle.reset();
  } else {
    idle = std::max(*idle,
                    std::min(1.0, static_cast<double>(*r.idle_samples) / static_cast<double>(r.gpu_samples)));
  }
}

struct JobSums {
  JobReportRow row;
  bool any = false;
  std::set<std::string> nodes;
  std::set<std::pair<std::string, std::uint32_t>> gpus;  // node, index
  Bases activity, energy, share;
  double tensor_weighted = 0, tensor_hours = 0;
  std::optional<std::tuple<std::string, std::uint32_t, std::int64_t>> idle_end;  // node, GPU, end
  std::int64_t idle_run_ns = 0;
};

// The GPU's activity then (0..1) and its basis; none unmeasured.
std::optional<std::pair<double, const char*>> activity_of(const HeldGpuRow& g) {
  if (g.sm_active_mean) return std::pair{*g.sm_active_mean, "sm_active"};
  if (g.util_mean) return std::pair{*g.util_mean / 100.0, "utilization"};
  return std::nullopt;
}

// The job's part of the GPU's energy then, and its basis.
std::pair<double, const char*> share_of(const HeldInterval& h) {
  const HeldGpuRow& g = *h.gpu;
  if (h.processes >= g.gpu_processes) return {1.0, "sole"};
  if (g.gpu_processes_with_sm == g.gpu_processes && g.gpu_sm_sum > 0) return {h.sm_sum / g.gpu_sm_sum, "sm"};
  return {static_cast<double>(h.processes) / static_cast<double>(g.gpu_processes), "equal"};
}

// An idle run goes on through wholly idle intervals of one GPU that follow on (within
// half a span); a partly idle one ends the run and starts the next, its idle passes taken
// at both of its ends (where a compute/sleep cycle puts them).
void add_idle(JobSums& j, const HeldInterval& h, double idle_part) {
  const HeldGpuRow& g = *h.gpu;
  const bool follows = j.idle_end && std::get<0>(*j.idle_end) == g.node &&
                       std::get<1>(*j.idle_end) == g.gpu &&
                       h.t_ns - std::get<2>(*j.idle_end) <= h.span_ns / 2;
  if (!follows) j.idle_run_ns = 0;
  const auto idle_ns = static_cast<std::int64_t>(std::llround(static_cast<double>(h.span_ns) * idle_part));
  std::int64_t& longest = j.row.longest_idle_ns;
  if (idle_ns >= h.span_ns) {
    j.idle_run_ns += h.span_ns;
    longest = std::max(longest, j.idle_run_ns);
  } else {
    longest = std::max(longest, j.idle_run_ns + idle_ns);
    j.idle_run_ns = idle_ns;
  }
  j.idle_end = std::tuple{g.node, g.gpu, h.t_ns + h.span_ns};
}

void add_interval(JobSums& j, const HeldInterval& h, const ReportOptions& options) {
  const HeldGpuRow& g = *h.gpu;
  JobReportRow& row = j.row;
  const double span_hours = static_cast<double>(h.span_ns) / kNsPerHour;
  const double hours = span_hours * h.held;
  row.gpu_hours += hours;
  // Held time is at the interval's end where the job came, at its start where it went.
  const auto held_ns = static_cast<std::int64_t>(std::llround(static_cast<double>(h.span_ns) * h.held));
  row.first_ns = j.any ? std::min(row.first_ns, h.t_ns + h.span_ns - held_ns) : h.t_ns + h.span_ns - held_ns;
  row.last_ns = j.any ? std::max(row.last_ns, h.t_ns + held_ns) : h.t_ns + held_ns;
  j.any = true;

  // Idle passes where counted, else the interval's mean activity decides for all of it.
  double idle_part = h.idle ? std::min(*h.idle, h.held) : 0.0;
  if (auto a = activity_of(g)) {
    j.activity.seen.insert(a->second);
    row.active_gpu_hours += hours * std::clamp(a->first, 0.0, 1.0);
    if (!h.idle && a->first < options.idle_threshold) idle_part = h.held;
  } else {
    row.unmeasured_gpu_hours += hours;
  }
  row.idle_gpu_hours += span_hours * idle_part;
  add_idle(j, h, idle_part);

  if (g.tensor_active_mean) {
    j.tensor_weighted += *g.tensor_active_mean * hours;
    j.tensor_hours += hours;
  }
  if (h.memory >= row.memory_peak_bytes) {
    row.memory_peak_bytes = h.memory;
    row.memory_capacity_bytes = g.memory_total;
  }

  std::optional<double> energy_mj = g.energy_mj;
  if (energy_mj) {
    j.energy.seen.insert(g.energy_counter_ns.value_or(0) > 0 ? "counter" : "power");
  } else if (g.power_mean_w) {
    energy_mj = *g.power_mean_w * static_cast<double>(h.span_ns) / 1e6;
    j.energy.seen.insert("power");
  }
  if (energy_mj) {
    const auto [share, basis] = share_of(h);
    j.share.seen.insert(basis);
    const double part = h.split ? std::min(1.0, *h.split) : h.energy * share;
    row.energy_kwh += *energy_mj * part / kMjPerKwh;
  }
}

}  // namespace

const char* selector_name(JobSelector::By by) {
  switch (by) {
    case JobSelector::By::kJob:
      return "job";
    case JobSelector::By::kPod:
      return "pod";
    case JobSelector::By::kNamespace:
      return "namespace";
    case JobSelector::By::kJobs:
      return "jobs";
    case JobSelector::By::kAll:
      break;
  }
  return "all";
}

std::vector<JobReportRow> job_report_rows(std::vector<HeldGpuRow> held, const ReportOptions& options) {
  std::sort(held.begin(), held.end(), [](const HeldGpuRow& a, const HeldGpuRow& b) {
    return std::tie(a.job, a.node, a.gpu, a.t_ns, a.pid, a.start_ns) <
           std::tie(b.job, b.node, b.gpu, b.t_ns, b.pid, b.start_ns);
  });
  std::map<std::string, JobSums> jobs;
  for (std::size_t i = 0; i < held.size();) {
    const HeldGpuRow& first = held[i];
    HeldInterval h;
    h.t_ns = first.t_ns;
    h.span_ns = first.span_ns;
    h.gpu = &first;
    for (; i < held.size() && held[i].job == first.job && held[i].node == first.node &&
           held[i].gpu == first.gpu && held[i].t_ns == first.t_ns;
         ++i) {
      h.add(held[i]);
    }
    JobSums& j = jobs[first.job];
    j.row.job = first.job;
    j.nodes.insert(first.node);
    j.gpus.insert({first.node, first.gpu});
    add_interval(j, h, options);
  }
  std::vector<JobReportRow> out;
  out.reserve(jobs.size());
  for (auto& entry : jobs) {
    JobSums& j = entry.second;
    JobReportRow row = std::move(j.row);
    row.nodes.assign(j.nodes.begin(), j.nodes.end());
    row.gpus = static_cast<std::uint32_t>(j.gpus.size());
    row.activity_basis = j.activity.joined({"sm_active", "utilization"});
    row.energy_basis = j.energy.joined({"counter", "power"});
    row.share_basis = j.share.joined({"sole", "sm", "equal"});
    // A job held for less than an interval: its times lie within that interval.
    if (row.last_ns < row.first_ns) std::swap(row.first_ns, row.last_ns);
    if (j.tensor_hours > 0) row.tensor_active_mean = j.tensor_weighted / j.tensor_hours;
    row.cost = row.gpu_hours * options.gpu_hour_price;
    row.idle_cost = row.idle_gpu_hours * options.gpu_hour_price;
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const JobReportRow& a, const JobReportRow& b) {
    return std::tie(b.idle_gpu_hours, b.gpu_hours, a.job) < std::tie(a.idle_gpu_hours, a.gpu_hours, b.job);
  });
  return out;
}

}  // namespace eacgm::history
