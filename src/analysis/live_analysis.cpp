// Aggregation on the output thread and snapshot publication.
#include "analysis/live_analysis.h"

#include <limits>

namespace eacgm::analysis {

void LiveAnalysis::on_calls(std::span<const CallEvent> calls) {
  for (const auto& e : calls) {
    calls_.add(e);
    by_process_.add(e);
    gpu_.add(e);
    memory_.add(e);
    kernels_.add(e);
    work_.add(e);
    nccl_.add(e);
    nccl_skew_.add(e);
    ops_.add(e);
    series_.add(e);
    anomalies_.add(e);
    waits_.add(e);
  }
}

void LiveAnalysis::on_gpu_time(const GpuTimeBatch& batch) {
  gpu_times_.add(batch);
  for (const auto& s : batch.spans) nccl_.add_gpu(s, span_clock_.from_monotonic(s.launch_ns));
}

void LiveAnalysis::on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  const auto wall = clocks_.wall();
  const std::int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(wall.time_since_epoch()).count();
  for (const auto& c : counts) {
    calls_.add(c);
    by_process_.add(c);
    gpu_.add(c);
    kernels_.add(c);
    work_.add(c);
    series_.add(c, now_s);
  }
  const auto now_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count());
  for (const auto& t : timings) {
    calls_.add(t);
    by_process_.add(t);
    anomalies_.add(t, now_ns);
  }
  waits_.add(counts, timings);
}

void LiveAnalysis::on_host_waits(std::span<const HostWaitProcess> processes,
                                 std::span<const HostWaitTimings> waits) {
  for (const auto& p : processes) waits_.add(p);
  for (const auto& w : waits) waits_.add(w);
}

void LiveAnalysis::on_gpu(const GpuSnapshot& snapshot) {
  gpu_.add(snapshot);
  gpu_times_.observe_nvml(snapshot);
  last_gpu_ = snapshot;
  series_.add(snapshot);
}

void LiveAnalysis::on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  inflight_.update(calls, scan_mono_ns);
  const auto progress = nccl_skew_.progress();
  hangs_.update(progress, inflight_.summary(), wall_ns(), is_alive_);
}

void LiveAnalysis::on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) {
  memory_.sweep(now, is_alive_, kExitChecksPerTick, kExitGrace);
  anomalies_.close_interval(wall_ns());
  waits_.sweep(now, is_alive_, kExitChecksPerTick, kExitGrace);
  by_process_.sweep(now, is_alive_, kExitChecksPerTick);
  gpu_.sweep(now, is_alive_, kExitChecksPerTick, kExitGrace);
  // NCCL kernels whose calls have not come within 2 s: joined with what is known.
  const std::uint64_t span_now = span_clock_.from_monotonic(monotonic_ns());
  nccl_.settle(span_now > kNcclKernelWait ? span_now - kNcclKernelWait : 0);
  python_.expire(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  publish(false, counters, now);
}

// Every record is in by now (the ring buffer was drained): a process that is gone is
// finalized without waiting.
void LiveAnalysis::on_end(const CounterValues& counters) {
  const auto now = clocks_.steady();
  memory_.sweep(now, is_alive_, memory_.process_count(), {});
  waits_.sweep(now, is_alive_, waits_.process_count(), {});
  by_process_.sweep(now, is_alive_, by_process_.process_count());
  gpu_.sweep(now, is_alive_, gpu_.process_count(), {});
  nccl_.settle(std::numeric_limits<std::uint64_t>::max());
  anomalies_.close_interval(wall_ns());
  publish(true, counters, now);
}

// A copy of each aggregator: readers get a consistent view that the output thread
// never touches again; its cost is bounded by the aggregators' key caps.
void LiveAnalysis::on_overhead(const OverheadReport& report) {
  overhead_ = report;
  overhead_.processes.clear();
  for (const ProcessOverhead& row : report.processes) overhead_rows_[row.pid] = row;
  std::size_t exited = 0;
  for (const auto& [pid, row] : overhead_rows_) exited += row.exited ? 1 : 0;
  // Exited rows past the cap go (by pid, not by exit: the rows carry no exit time).
  for (auto it = overhead_rows_.begin(); it != overhead_rows_.end() && exited > kMaxExitedOverheadRows;) {
    if (!it->second.exited) {
      ++it;
      continue;
    }
    it = overhead_rows_.erase(it);
    --exited;
  }
  if (overhead_rows_.size() > kMaxOverheadRows) {
    for (auto it = overhead_rows_.begin();
         it != overhead_rows_.end() && overhead_rows_.size() > kMaxOverheadRows;)
      it = it->second.exited ? overhead_rows_.erase(it) : std::next(it);
  }
}

void LiveAnalysis::publish(bool final, const CounterValues& counters,
                           std::chrono::steady_clock::time_point now) {
  // The anomalies change rarely: a copy is made only when they did.
  const AnomalySummary& found = anomalies_.summary();
  if (!anomalies_published_ || anomalies_published_->total != found.total ||
      anomalies_published_->functions != found.functions ||
      anomalies_published_->interval_total != found.interval_total ||
      anomalies_published_->level_shifts != found.level_shifts ||
      anomalies_published_->context_updates != found.context_updates ||
      anomalies_published_->untracked_calls != found.untracked_calls) {
    anomalies_published_ = std::make_shared<const AnomalySummary>(found);
  }
  // The hot spots too: rows and folded stacks are made again only after new samples (or
  // when a window's slice left), and, since a full profile takes a tenth of a second to
  // read out, at most every kPythonRefresh until the final snapshot.
  if (!python_published_ ||
      (python_published_->changes != python_.changes() && (final || now - python_made_ >= kPythonRefresh))) {
    python_published_ = std::make_shared<const PythonHotSpots>(python_.hot_spots());
    python_made_ = now;
  }
  if (!by_process_published_ || final || now - by_process_made_ >= kProcessRefresh) {
    by_process_published_ = by_process_.view();
    by_process_made_ = now;
  }
  auto snap = std::make_shared<AnalysisSnapshot>(AnalysisSnapshot{clocks_.wall(),
                                                                  ++sequence_,
                                                                  final,
                                                                  calls_,
                                                                  gpu_,
                                                                  last_gpu_,
                                                                  memory_.summary(),
                                                                  counters,
                                                                  kernels_,
                                                                  work_,
                                                                  nccl_,
                                                                  nccl_skew_.summary(),
                                                                  ops_.summary(),
                                                                  series_.view(),
                                                                  anomalies_published_,
                                                                  overhead_,
                                                                  python_published_,
                                                                  waits_.summary(clocks_.steady()),
                                                                  inflight_.summary(),
                                                                  hangs_.summary(),
                                                                  by_process_published_,
                                                                  gpu_times_.summary()});
  snap->overhead.processes.reserve(overhead_rows_.size());
  for (const auto& [pid, row] : overhead_rows_) snap->overhead.processes.push_back(row);
  published_.publish(std::move(snap));
}

SeriesWindow series_window(const AnalysisSnapshot& snap, std::size_t window_s) {
  const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(snap.time.time_since_epoch()).count();
  const std::int64_t end = std::max<std::int64_t>(now_s, snap.series.latest());
  return SeriesWindow{snap.time, snap.sequence, window_s, snap.series.domains(),
                      snap.series.points(end, window_s)};
}

}  // namespace eacgm::analysis
