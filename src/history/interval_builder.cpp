// One interval's rows: differences of the cumulative snapshots, and GPU passes folded.
#include "history/interval_builder.h"

#include <algorithm>
#include <chrono>
#include <string_view>

#include "analysis/anomaly_detector.h"
#include "analysis/gpu_activity.h"
#include "analysis/gpu_health.h"
#include "analysis/gpu_times.h"
#include "analysis/hang_diagnosis.h"
#include "analysis/kernel_stats.h"
#include "analysis/memory_ledger.h"
#include "analysis/process_calls.h"
#include "core/gpu_sample.h"

namespace eacgm::history {

namespace {

// What is known of a process's workload now; a fact learnt before stays when it is no
// longer found (the process gone, the kubelet unreachable).
void learn_workload(ProcessRecord& r, sample::Workload w) {
  auto learn = [](std::string& into, std::string& v) {
    if (!v.empty()) into = std::move(v);
  };
  learn(r.container, w.container_id);
  learn(r.pod_uid, w.pod_uid);
  learn(r.pod, w.pod);
  learn(r.namespace_, w.namespace_);
  learn(r.container_name, w.container);
  learn(r.job, w.job);
  learn(r.job_step, w.job_step);
}

// Each entry of `kept` (the newest of the `total` ever kept, oldest first) past the first
// `written` of the total, to `write`; `written` becomes the total. A summary that counts
// none (a total under the list's length) counts the list.
template <class List, class Write>
void write_new(const List& kept, std::uint64_t total, std::uint64_t& written, Write write) {
  total = std::max<std::uint64_t>(total, kept.size());
  const std::uint64_t first = total - kept.size();
  for (std::uint64_t i = std::max(written, first); i < total; ++i) write(kept[i - first]);
  written = std::max(written, total);
}

}  // namespace

IntervalBuilder::IntervalBuilder(std::shared_ptr<const sample::ProcessFacts> facts, StartOf start_of,
                                 double idle_threshold)
    : facts_(std::move(facts)), start_of_(std::move(start_of)), idle_threshold_(idle_threshold) {}

IntervalBuilder::Known& IntervalBuilder::known(std::uint32_t pid, std::int64_t t_ns) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) return it->second;
  Known k;
  k.record.key.pid = pid;
  // A process gone before it was first written has no /proc: the first traced call
  // stands for its start (it still tells a reused pid apart).
  std::optional<std::int64_t> start = start_of_ ? start_of_(pid) : std::nullopt;
  if (!start) {
    if (auto seen = first_seen_.find(pid); seen != first_seen_.end()) start = seen->second;
  }
  k.record.key.start_ns = start.value_or(0);
  k.record.first_ns = t_ns;
  if (facts_) {
    k.record.cmdline = facts_->cmdline(pid);
    const auto r = facts_->rank(pid);
    k.record.rank = r.rank;
    k.record.local_rank = r.local_rank;
    k.record.world_size = r.world_size;
    learn_workload(k.record, facts_->workload(pid));
  }
  return processes_.emplace(pid, std::move(k)).first->second;
}

void IntervalBuilder::observe_gpu(const GpuSnapshot& pass) {
  if (last_gpu_sequence_ && *last_gpu_sequence_ == pass.sequence) return;
  last_gpu_sequence_ = pass.sequence;
  const std::int64_t pass_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(pass.time.time_since_epoch()).count();
  std::set<std::uint32_t> idle;           // the GPUs under the idle threshold in this pass
  std::map<std::uint32_t, double> power;  // each GPU's power in this pass, in W
  for (const DeviceSample& d : pass.devices) {
    if (d.lost) continue;
    std::optional<double> activity;
    if (d.gpm && d.gpm->sm_active) {
      activity = d.gpm->sm_active;
    } else if (d.utilization_gpu_percent) {
      activity = *d.utilization_gpu_percent / 100.0;
    }
    if (activity && *activity < idle_threshold_) idle.insert(d.index);
    EnergyTrack& e = energy_[d.index];
    const std::optional<double> pass_w =
        d.power_usage_milliwatts ? std::optional<double>(*d.power_usage_milliwatts / 1000.0) : std::nullopt;
    if (d.energy_total_millijoules && e.read_mj != d.energy_total_millijoules) {
      e.read_mj = d.energy_total_millijoules;
      e.read_ns = pass_ns;
      e.since_mj = 0;
      e.power_ns = pass_ns;
    } else if (pass_w && e.power_w && pass_ns > e.power_ns) {
      // Between the passes, the mean of their two readings.
      e.since_mj += (*e.power_w + *pass_w) / 2 * static_cast<double>(pass_ns - e.power_ns) / 1e6;
      e.power_ns = pass_ns;
    }
    if (pass_w) {
      e.power_w = pass_w;
      e.power_ns = pass_ns;
      power[d.index] = *pass_w;
    }
    GpuAcc& g = gpus_[d.index];
    g.uuid = d.uuid;
    g.name = d.name;
    ++g.samples;
    if (d.utilization_gpu_percent) {
      g.util_sum += *d.utilization_gpu_percent;
      ++g.util_n;
      g.util_max = std::max(g.util_max.value_or(0), *d.utilization_gpu_percent);
    }
    if (d.memory_used_bytes) {
      g.mem_sum += static_cast<double>(*d.memory_used_bytes);
      ++g.mem_n;
      g.mem_max = std::max(g.mem_max.value_or(0), *d.memory_used_bytes);
    }
    if (d.memory_total_bytes) g.mem_total = d.memory_total_bytes;
    if (d.power_usage_milliwatts) {
      const double w = *d.power_usage_milliwatts / 1000.0;
      g.power_sum += w;
      ++g.power_n;
      g.power_max = std::max(g.power_max.value_or(0.0), w);
    }
    if (d.temperature_gpu_celsius) g.temp_max = std::max(g.temp_max.value_or(0), *d.temperature_gpu_celsius);
    if (d.gpm) {
      g.sm_active.add(d.gpm->sm_active);
      g.tensor_active.add(d.gpm->tensor_active);
      g.dram_active.add(d.gpm->dram_active);
    }
  }
  // Each GPU's processes in this pass, for their shares of its power: by SM share where
  // every one of them has one and they add up above 0, else equal.
  struct Listed {
    std::uint32_t n = 0, with_sm = 0;
    double sm = 0;
  };
  std::map<std::uint32_t, Listed> listed;
  for (const ProcessSample& p : pass.processes) {
    Listed& l = listed[p.gpu_index];
    ++l.n;
    if (p.sm_utilization_percent) {
      ++l.with_sm;
      l.sm += *p.sm_utilization_percent;
    }
  }
  for (const ProcessSample& p : pass.processes) {
    GpuProcAcc& a = gpu_processes_[{p.gpu_index, p.pid}];
    ++a.samples;
    if (idle.count(p.gpu_index) != 0) ++a.idle_samples;
    if (auto w = power.find(p.gpu_index); w != power.end()) {
      a.power_sum += w->second;
      ++a.power_n;
      const Listed& l = listed[p.gpu_index];
      const double part = l.with_sm == l.n && l.sm > 0 ? *p.sm_utilization_percent / l.sm : 1.0 / l.n;
      a.power_share += w->second * part;
    }
    if (p.used_memory_bytes) a.mem_max = std::max(a.mem_max.value_or(0), *p.used_memory_bytes);
    if (p.sm_utilization_percent) {
      a.sm_sum += *p.sm_utilization_percent;
      ++a.sm_n;
    }
  }
}

std::optional<double> IntervalBuilder::energy_at(const EnergyTrack& e, std::int64_t end_ns) {
  constexpr std::int64_t kStaleNs = 60'000'000'000;
  if (!e.read_mj || end_ns - e.read_ns > kStaleNs) return std::nullopt;
  const std::int64_t from_ns = std::max(e.read_ns, e.power_ns);
  const double since_s = static_cast<double>(std::max<std::int64_t>(0, end_ns - from_ns)) / 1e9;
  return static_cast<double>(*e.read_mj) + e.since_mj + e.power_w.value_or(0) * since_s * 1000.0;
}

IntervalBatch IntervalBuilder::build(const analysis::AnalysisSnapshot& snap, std::int64_t t_ns,
                                     std::int64_t end_ns) {
  IntervalBatch batch;
  batch.t_ns = t_ns;
  batch.span_ns = end_ns - t_ns;
  if (const GpuSnapshot* pass = snap.find<GpuSnapshot>()) observe_gpu(*pass);

  std::map<std::uint32_t, std::string> comm_of;
  first_seen_.clear();
  for (const auto& p : snap.get<analysis::GpuActivity>().processes()) {
    comm_of.emplace(p.pid, p.name);
    if (p.first_seen_ns > 0) first_seen_.emplace(p.pid, static_cast<std::int64_t>(p.first_seen_ns));
  }

  std::set<std::uint32_t> touched;
  const auto* by_process = snap.find<analysis::ProcessCallsView>();
  if (by_process != nullptr) {
    for (const auto& [pid, proc] : by_process->processes) {
      Known& k = known(pid, t_ns);
      if (auto c = comm_of.find(pid); c != comm_of.end() && !c->second.empty()) k.record.comm = c->second;
      if (proc.calls != k.written) {
        std::map<std::pair<std::string, std::string>, const analysis::LatencySketch*> before;
        std::map<std::pair<std::string, std::string>, analysis::CallSummaryRow> before_rows;
        if (k.written) {
          for (auto& r : k.written->rows(false)) {
            before.emplace(std::make_pair(r.domain, r.function), r.sketch);
            before_rows.emplace(std::make_pair(r.domain, r.function), std::move(r));
          }
        }
        for (const auto& r : proc.calls->rows(false)) {
          const auto key = std::make_pair(r.domain, r.function);
          const auto b = before_rows.find(key);
          const analysis::CallSummaryRow* old = b == before_rows.end() ? nullptr : &b->second;
          if (old != nullptr && old->calls == r.calls && old->timed == r.timed && old->errors == r.errors)
            continue;
          FunctionRecord f;
          f.process = k.record.key;
          f.domain = r.domain;
          f.function = r.function;
          f.calls = r.calls - (old ? old->calls : 0);
          f.errors = r.errors - (old ? old->errors : 0);
          f.bytes = r.bytes - (old ? old->bytes : 0);
          f.timed = r.timed - (old ? old->timed : 0);
          f.estimated = r.estimated - (old ? old->estimated : 0);
          const double var_now = r.calls_error * r.calls_error;
          const double var_old = old ? old->calls_error * old->calls_error : 0.0;
          f.calls_variance = var_now > var_old ? var_now - var_old : 0.0;
          if (r.sketch != nullptr) {
            f.latency = coarsened(difference(*r.sketch, old ? old->sketch : nullptr), kStoredBits);
          }
          batch.functions.push_back(std::move(f));
        }
        k.written = proc.calls;
        touched.insert(pid);
      }
      if (proc.exited && !k.exit_written) {
        k.record.exited = true;
        k.exit_written = true;
        touched.insert(pid);
      }
    }
  }
  for (const auto& [key, acc] : gpu_processes_) touched.insert(key.second);

  // GPUs and the processes NVML listed on them.
  for (const auto& [index, g] : gpus_) {
    GpuRecord r;
    r.index = index;
    r.uuid = g.uuid;
    r.name = g.name;
    r.samples = g.samples;
    if (g.util_n) r.util_mean = g.util_sum / static_cast<double>(g.util_n);
    r.util_max = g.util_max;
    if (g.mem_n) r.memory_used_mean = g.mem_sum / static_cast<double>(g.mem_n);
    r.memory_used_max = g.mem_max;
    r.memory_total = g.mem_total;
    if (g.power_n) r.power_mean_w = g.power_sum / static_cast<double>(g.power_n);
    r.power_max_w = g.power_max;
    r.temperature_max = g.temp_max;
    r.sm_active_mean = g.sm_active.mean();
    r.sm_active_max = g.sm_active.max;
    r.tensor_active_mean = g.tensor_active.mean();
    r.tensor_active_max = g.tensor_active.max;
    r.dram_active_mean = g.dram_active.mean();
    r.dram_active_max = g.dram_active.max;
    EnergyTrack& e = energy_[index];
    const std::optional<double> at_end = energy_at(e, end_ns);
    if (at_end && e.at_end_mj && *at_end >= *e.at_end_mj) {
      r.energy_mj = *at_end - *e.at_end_mj;
      r.energy_counter_ns = batch.span_ns;
    } else if (r.power_mean_w) {
      r.energy_mj = *r.power_mean_w * static_cast<double>(batch.span_ns) / 1e6;
      r.energy_counter_ns = 0;
    }
    e.at_end_mj = at_end;
    batch.gpus.push_back(std::move(r));
  }
  for (const auto& [key, a] : gpu_processes_) {
    GpuProcessRecord r;
    r.gpu = key.first;
    r.process = known(key.second, t_ns).record.key;
    r.samples = a.samples;
    r.idle_samples = a.idle_samples;
    r.memory_max = a.mem_max;
    if (a.sm_n) r.sm_mean = a.sm_sum / static_cast<double>(a.sm_n);
    if (a.power_n) {
      r.power_sum_w = a.power_sum;
      r.power_share_w = a.power_share;
    }
    batch.gpu_processes.push_back(r);
  }
  gpus_.clear();
  gpu_processes_.clear();

  add_gpu_time(snap.get<analysis::GpuTimeSummary>(), t_ns, batch, touched);

  // Kernels: launches since the last interval, per name.
  for (const auto& row : snap.get<analysis::KernelStats>().rows()) {
    std::uint64_t& written = kernels_written_[row.name];
    if (row.launches > written) batch.kernels.push_back({row.name, row.launches - written});
    written = row.launches;
  }

  // Anomalies not written yet: the summary keeps the recent ones, oldest first.
  if (const auto* anomalies = snap.find<analysis::AnomalySummary>()) {
    // By the order of keeping, not of time: a held slow call is kept with its group, after
    // newer ones of other functions, and a slow interval with the next that confirms it.
    write_new(anomalies->recent, anomalies->kept, anomalies_kept_, [&](const analysis::Anomaly& a) {
      AnomalyRecord r;
      r.t_ns = static_cast<std::int64_t>(a.ts_ns);
      r.end_ns = static_cast<std::int64_t>(a.ts_ns + a.dur_ns);
      r.process = known(a.pid, t_ns).record.key;
      r.kind = "call";
      r.domain = a.domain;
      r.function = a.name;
      r.score = a.score;
      r.value = static_cast<double>(a.dur_ns);
      r.median_ns = a.median_ns;
      batch.anomalies.push_back(std::move(r));
    });
    write_new(anomalies->intervals, anomalies->interval_total, intervals_kept_,
              [&](const analysis::IntervalAnomaly& a) {
                AnomalyRecord r;
                r.t_ns = static_cast<std::int64_t>(a.start_ns);
                r.end_ns = static_cast<std::int64_t>(a.end_ns);
                r.kind = "interval";
                r.domain = a.domain;
                r.function = a.name;
                r.score = a.score;
                r.value = a.ratio;
                r.median_ns = a.median_ns;
                batch.anomalies.push_back(std::move(r));
              });
  }

  // Hangs: written once, when over (their whole span).
  for (const auto& h : snap.get<analysis::HangSummary>().ended) {
    if (h.end_ns <= hangs_through_) continue;
    AnomalyRecord r;
    r.t_ns = static_cast<std::int64_t>(h.start_ns);
    r.end_ns = static_cast<std::int64_t>(h.end_ns);
    if (h.pid != 0) r.process = known(h.pid, t_ns).record.key;
    r.kind = "hang";
    r.domain = h.domain;
    r.function = h.function;
    r.score = static_cast<double>(h.number);  // the collective instance, 0 for the age rule
    r.value = static_cast<double>(h.age_ns);
    batch.anomalies.push_back(std::move(r));
    hangs_through_ = h.end_ns;
  }

  // GPU health events: each once. The event's kind is the domain, what happened the
  // function and the GPU's index the score; the process is the first on the GPU in a
  // waiting call, else the first on it.
  const analysis::GpuHealthSummary& health = snap.get<analysis::GpuHealthSummary>();
  for (std::size_t i = 0; i < health.events.size(); ++i) {
    if (health.total - health.events.size() + i < gpu_events_written_) continue;
    const analysis::GpuHealthEvent& e = health.events[i];
    AnomalyRecord r;
    r.t_ns = r.end_ns = static_cast<std::int64_t>(e.ts_ns);
    auto in_call =
        std::find_if(e.processes.begin(), e.processes.end(), [](const auto& p) { return !p.calls.empty(); });
    if (in_call == e.processes.end()) in_call = e.processes.begin();
    if (in_call != e.processes.end()) r.process = known(in_call->pid, t_ns).record.key;
    r.kind = "gpu";
    r.domain = e.kind;
    r.function = e.detail;
    r.score = static_cast<double>(e.gpu);
    batch.anomalies.push_back(std::move(r));
  }
  gpu_events_written_ = std::max(gpu_events_written_, health.total);

  // Leaks: written once, when the ledger finalized the process.
  for (const auto& row : snap.get<analysis::MemorySummary>().rows) {
    if (!row.exited || row.leak_count == 0 || leaks_written_.count(row.pid)) continue;
    leaks_written_.insert(row.pid);
    Known& k = known(row.pid, t_ns);
    if (k.record.comm.empty()) k.record.comm = row.comm;
    batch.leaks.push_back({k.record.key, row.device, row.leak_count, row.leak_bytes});
    touched.insert(row.pid);
  }
  // Only the exited processes the ledger still lists can come again: the set keeps those
  // (the ledger's exited cap bounds it), not every leaking process the agent ever saw.
  if (!leaks_written_.empty()) {
    std::set<std::uint32_t> listed;
    for (const auto& row : snap.get<analysis::MemorySummary>().rows) {
      if (row.exited) listed.insert(row.pid);
    }
    std::erase_if(leaks_written_, [&listed](std::uint32_t pid) { return listed.count(pid) == 0; });
  }

  // The processes this interval touched, with their facts as now known.
  for (std::uint32_t pid : touched) {
    Known& k = known(pid, t_ns);
    k.record.last_ns = end_ns;
    // A pod's names can come from the kubelet after the process was first seen: asked
    // again while they are missing.
    if (facts_ && !k.record.exited && !k.record.pod_uid.empty() && k.record.pod.empty())
      learn_workload(k.record, facts_->workload(pid));
    batch.processes.push_back(k.record);
  }
  // Processes the analysis let go of are forgotten here too.
  for (auto it = processes_.begin(); it != processes_.end();) {
    const bool listed = by_process != nullptr && by_process->processes.count(it->first) != 0;
    const bool stale = it->second.exit_written || end_ns - it->second.record.last_ns > kForgetAfterNs;
    it = !listed && stale ? processes_.erase(it) : std::next(it);
  }
  return batch;
}

void IntervalBuilder::add_gpu_time(const analysis::GpuTimeSummary& summary, std::int64_t t_ns,
                                   IntervalBatch& batch, std::set<std::uint32_t>& touched) {
  std::map<std::pair<std::uint32_t, std::string>, FunctionRecord> rows;
  std::set<std::pair<std::uint32_t, std::uint64_t>> listed;
  std::map<std::uint32_t, std::string_view> comm_of;  // a process known only through its hook has no other
  for (const auto& p : summary.processes) comm_of.emplace(p.ring.pid, p.ring.comm);
  for (const auto& row : summary.kernels) {
    const auto key = std::make_pair(row.pid, row.function);
    listed.insert(key);
    GpuWritten& w = gpu_written_[key];
    if (row.launches == w.launches && row.sketch == w.sketch) continue;  // a shared sketch never changes
    // The figures' sketch changes kind once, when the first queued span comes after spans
    // that all started idle: the queued spans are then new in full.
    const bool same_kind = w.sketch != nullptr && w.upper_bound == row.upper_bound;
    StoredSketch durations;
    if (row.sketch != nullptr && row.sketch != w.sketch) {
      durations = coarsened(difference(*row.sketch, same_kind ? w.sketch.get() : nullptr), kStoredBits);
    }
    const std::string name = row.graph ? "graph" : row.name.empty() ? "unnamed" : row.name;
    FunctionRecord& f = rows[{row.pid, name}];
    if (f.function.empty()) {
      Known& k = known(row.pid, t_ns);
      if (auto c = comm_of.find(row.pid); k.record.comm.empty() && c != comm_of.end())
        k.record.comm = c->second;
      f.process = k.record.key;
      f.domain = kGpuTimeDomain;
      f.function = name;
    }
    f.calls += row.launches > w.launches ? row.launches - w.launches : 0;
    f.timed += durations.count;
    f.latency.merge(durations);
    w = GpuWritten{row.launches, row.sketch, row.upper_bound};
  }
  std::erase_if(gpu_written_, [&listed](const auto& w) { return listed.count(w.first) == 0; });
  for (auto& [key, f] : rows) {
    if (f.calls == 0 && f.timed == 0) continue;
    touched.insert(key.first);
    batch.functions.push_back(std::move(f));
  }
}

}  // namespace eacgm::history
