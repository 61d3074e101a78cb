#include "analysis/gpu_times.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace eacgm::analysis {
namespace {

// What a kernel's row and each of its shapes' rows share: counts, whether the figures are
// upper bounds, and the quantiles of the sketch they come from (returned).
template <typename Row>
const LatencySketch& fill_figures(Row& row, const LatencySketch& queued, const LatencySketch& idle) {
  row.idle_starts = idle.count();
  row.timed = queued.count() + row.idle_starts;
  row.upper_bound = queued.count() == 0 && row.idle_starts > 0;
  const LatencySketch& used = row.upper_bound ? idle : queued;
  row.samples = used.count();
  if (used.count() > 0) {
    row.mean_ns = static_cast<double>(used.sum()) / static_cast<double>(used.count());
    row.p50_ns = used.quantile(0.5);
    row.p99_ns = used.quantile(0.99);
    row.max_ns = static_cast<double>(used.max());
  }
  return used;
}

// The 95% half-width of `population` launches' total estimated from `n` of them drawn at
// random with these moments: 1.96 standard errors of the mean, with the finite-population
// correction (all timed: exact), times the population. Absent under two samples.
std::optional<double> total_ci95(std::uint64_t n, double sum, double squares, std::uint64_t population) {
  if (n < 2 || population == 0) return std::nullopt;
  const double count = static_cast<double>(n);
  const double mean = sum / count;
  const double variance = std::max(0.0, (squares - count * mean * mean) / (count - 1));
  const double unsampled = std::max(0.0, 1 - count / static_cast<double>(population));
  return 1.96 * static_cast<double>(population) * std::sqrt(variance / count * unsampled);
}

}  // namespace

GpuTimes::Function* GpuTimes::function(Key key) {
  auto it = functions_.find(key);
  if (it != functions_.end()) return &it->second;
  if (functions_.size() >= max_functions_) {
    // Make room from processes that exited (their rows were reported while they ran).
    for (auto f = functions_.begin(); f != functions_.end() && functions_.size() >= max_functions_;) {
      auto r = rings_.find(f->first.first);
      if (r == rings_.end() || !r->second.exited) {
        ++f;
        continue;
      }
      shape_count_ -= f->second.shapes.size();
      f = functions_.erase(f);
    }
    std::erase_if(rings_, [this](const auto& r) {
      const bool gone =
          r.second.exited && functions_.lower_bound({r.first, 0}) == functions_.upper_bound({r.first, ~0ull});
      if (gone) nvml_.erase(r.first);
      return gone;
    });
    if (functions_.size() >= max_functions_) return nullptr;
  }
  return &functions_[key];
}

void GpuTimes::add_shape(Function& f, const GpuSpan& s) {
  auto it = f.shapes.find(s.shape);
  if (it == f.shapes.end()) {
    if (f.shapes.size() >= kMaxShapesPerFunction || shape_count_ >= max_shapes_) {
      ++f.shapes_left_out;
      return;
    }
    it = f.shapes.emplace(s.shape, ShapeTimes{}).first;
    ++shape_count_;
  }
  (s.queued ? it->second.durations : it->second.idle).add(s.duration_ns);
}

void GpuTimes::add(const GpuTimeBatch& batch) {
  for (const GpuFunctionName& n : batch.names) {
    if (Function* f = function({n.pid, n.function})) {
      f->name = n.name;
      f->named = true;
      f->nccl = n.nccl;
    }
  }
  for (const GpuSpan& s : batch.spans) {
    Function* f = function({s.pid, s.function});
    if (f == nullptr) continue;
    f->graph = s.graph;
    f->nccl = f->nccl || s.nccl;
    PerStream& ps = f->streams[s.stream];
    ps.device = s.device;
    ++ps.timed;
    if (s.first) {
      // Cold: kept out of the kernel's figures and of its shapes'.
      f->first_launch_ns = s.duration_ns;
      ps.first_launch_ns += s.duration_ns;
    } else {
      (s.queued ? f->durations : f->idle).for_write().add(s.duration_ns);
      (s.queued ? f->squares : f->idle_squares) +=
          static_cast<double>(s.duration_ns) * static_cast<double>(s.duration_ns);
      if (s.shaped) add_shape(*f, s);
      (s.queued ? ps.ns : ps.idle_ns) += s.duration_ns;
    }
    if (ps.first_ns == 0 || s.start_ns < ps.first_ns) ps.first_ns = s.start_ns;
    ps.last_ns = std::max(ps.last_ns, s.start_ns + s.duration_ns);
  }
  for (const GpuLaunchCount& c : batch.counts) {
    Function* f = function({c.pid, c.function});
    if (f == nullptr) {
      ++folded_launches_;
      continue;
    }
    f->graph = f->graph || c.graph;
    f->launches = std::max(f->launches, c.launches);
  }
  for (const GpuRingState& r : batch.rings) rings_[r.pid] = r;
}

void GpuTimes::observe_nvml(const GpuSnapshot& pass) {
  for (const ProcessSample& p : pass.processes) {
    if (!p.sm_utilization_percent) continue;
    const auto r = rings_.find(p.pid);
    if (r == rings_.end() || r->second.exited || r->second.sampled == 0) continue;
    NvmlMean& m = nvml_[p.pid];
    m.sum += *p.sm_utilization_percent;
    ++m.n;
  }
}

GpuTimeSummary GpuTimes::summary() const {
  GpuTimeSummary out;
  out.folded_launches = folded_launches_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::uint64_t>, GpuStreamRow> streams;
  std::map<std::uint32_t, double> per_process;
  std::map<std::string, GpuKernelNameTimes> by_name;
  for (const auto& [key, f] : functions_) {
    GpuKernelTimeRow row;
    row.pid = key.first;
    row.function = key.second;
    row.name = f.named ? f.name : (f.graph ? fmt::format("graph {:#x}", key.second) : "");
    row.nccl = f.nccl;
    row.graph = f.graph;
    const LatencySketch& used = fill_figures(row, f.durations.get(), f.idle.get());
    row.sketch = row.upper_bound ? f.idle.share() : f.durations.share();
    const std::uint64_t firsts = f.first_launch_ns ? 1 : 0;
    row.timed += firsts;
    row.launches = std::max(f.launches, row.timed);
    row.timed_ns = used.sum();
    if (f.first_launch_ns) row.first_launch_ns = static_cast<double>(*f.first_launch_ns);
    if (used.count() > 0 || firsts > 0) {
      // The launches the timed mean stands for, and what the first launch's own time counts
      // for: itself, or, when no other launch was timed, every launch.
      const std::uint64_t others = row.launches - firsts;
      const double scale =
          used.count() > 0 ? static_cast<double>(others) / static_cast<double>(used.count()) : 0;
      const double first_scale = used.count() > 0 ? 1 : static_cast<double>(row.launches);
      row.est_gpu_ns =
          static_cast<double>(row.timed_ns) * scale + row.first_launch_ns.value_or(0) * first_scale;
      row.est_gpu_ci_ns = total_ci95(used.count(), static_cast<double>(used.sum()),
                                     row.upper_bound ? f.idle_squares : f.squares, others);
      if (others == 0) row.est_gpu_ci_ns = 0;  // the first launch alone, timed: exact
      for (const auto& [stream, ps] : f.streams) {
        GpuStreamRow& s = streams[{key.first, ps.device, stream}];
        s.pid = key.first;
        s.device = ps.device;
        s.stream = stream;
        s.timed += ps.timed;
        s.est_busy_ns += static_cast<double>(row.upper_bound ? ps.idle_ns : ps.ns) * scale +
                         static_cast<double>(ps.first_launch_ns) * first_scale;
        if (s.first_ns == 0 || ps.first_ns < s.first_ns) s.first_ns = ps.first_ns;
        s.last_ns = std::max(s.last_ns, ps.last_ns);
      }
    }
    for (const auto& [shape, st] : f.shapes) {
      GpuShapeRow sr;
      sr.shape = shape;
      fill_figures(sr, st.durations, st.idle);
      row.shapes.push_back(sr);
    }
    std::stable_sort(row.shapes.begin(), row.shapes.end(),
                     [](const GpuShapeRow& a, const GpuShapeRow& b) { return a.timed > b.timed; });
    row.shapes_left_out = f.shapes_left_out;
    per_process[key.first] += row.est_gpu_ns;
    GpuKernelNameTimes& named = by_name[row.graph          ? std::string("graph")
                                        : row.name.empty() ? std::string("unnamed")
                                                           : row.name];
    named.launches += row.launches;
    named.est_gpu_ns += row.est_gpu_ns;
    if (row.est_gpu_ci_ns) {
      named.est_gpu_ci_ns = std::hypot(named.est_gpu_ci_ns, *row.est_gpu_ci_ns);
      named.has_ci = true;
    }
    (void)named.durations.merge(used);  // same options: cannot fail
    out.kernels.push_back(std::move(row));
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const GpuKernelTimeRow& a, const GpuKernelTimeRow& b) {
    if (a.est_gpu_ns != b.est_gpu_ns) return a.est_gpu_ns > b.est_gpu_ns;
    return std::tie(a.pid, a.name, a.function) < std::tie(b.pid, b.name, b.function);
  });
  for (auto& [key, s] : streams) {
    const double span = s.last_ns > s.first_ns ? static_cast<double>(s.last_ns - s.first_ns) : 0;
    s.busy_share = span > 0 ? std::min(1.0, s.est_busy_ns / span) : 0;
    out.streams.push_back(s);
  }
  struct Window {
    std::uint64_t first = 0, last = 0;
    double busy = 0;
    std::set<std::int32_t> devices;
  };
  std::map<std::uint32_t, Window> windows;
  for (const GpuStreamRow& s : out.streams) {
    Window& w = windows[s.pid];
    if (w.first == 0 || s.first_ns < w.first) w.first = s.first_ns;
    w.last = std::max(w.last, s.last_ns);
    w.busy += s.est_busy_ns;
    w.devices.insert(s.device);
  }
  for (const auto& [pid, ring] : rings_) {
    GpuTimeProcess p;
    p.ring = ring;
    p.est_gpu_ns = per_process[pid];
    if (const auto w = windows.find(pid); w != windows.end()) {
      p.devices = static_cast<std::uint32_t>(w->second.devices.size());
      if (w->second.last > w->second.first) {
        const double span = static_cast<double>(w->second.last - w->second.first) * p.devices;
        p.busy_percent = std::min(100.0, 100.0 * w->second.busy / span);
      }
    }
    if (const auto m = nvml_.find(pid); m != nvml_.end() && m->second.n > 0) {
      p.nvml_samples = m->second.n;
      p.nvml_sm_percent = m->second.sum / static_cast<double>(m->second.n);
    }
    out.processes.push_back(p);
  }
  for (auto& [name, n] : by_name) {
    n.name = name;
    out.names.push_back(std::move(n));
  }
  std::sort(out.names.begin(), out.names.end(), [](const GpuKernelNameTimes& a, const GpuKernelNameTimes& b) {
    if (a.est_gpu_ns != b.est_gpu_ns) return a.est_gpu_ns > b.est_gpu_ns;
    return a.name < b.name;
  });
  return out;
}

}  // namespace eacgm::analysis
