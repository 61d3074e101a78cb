// Host-wait families for /metrics, named and described by metrics_table.
#include "export/host_wait_metrics.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/host_waits.h"
#include "export/metrics_table.h"
#include "export/top_n_fold.h"

namespace eacgm::exporting {
namespace {

// Whether each process keeps its series: those with the most time waiting do.
std::map<std::uint32_t, bool> kept_processes(const analysis::HostWaitSummary& waits,
                                             std::size_t max_processes) {
  std::map<std::uint32_t, std::uint64_t> by_pid;
  for (const auto& r : waits.rows) by_pid[r.pid] += r.total_ns;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> order(by_pid.begin(), by_pid.end());
  std::map<std::uint32_t, bool> kept;
  fold_top_n(
      order, max_processes, [](const auto& p) { return p.second; },
      [&](const auto& p) { kept[p.first] = false; });
  for (const auto& [pid, total_ns] : order) kept[pid] = true;
  return kept;
}

}  // namespace

std::uint64_t host_wait_processes_folded(const analysis::AnalysisSnapshot& snap, std::size_t max_processes) {
  std::uint64_t folded = 0;
  for (const auto& [pid, kept] : kept_processes(snap.get<analysis::HostWaitSummary>(), max_processes))
    folded += kept ? 0 : 1;
  return folded;
}

void append_host_wait_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                              const CallMetricsOptions& options) {
  const analysis::HostWaitSummary& waits = snap.get<analysis::HostWaitSummary>();
  const auto& rows = waits.rows;
  auto kept = kept_processes(waits, options.max_process_series);

  auto labels = [&](const analysis::HostWaitRow& r) {
    Labels l{
        {"pid", std::to_string(r.pid)}, {"comm", r.comm}, {"kind", std::string(host_wait_kind_name(r.kind))}};
    if (options.rank_of_pid) {
      sample::RankInfo rank = options.rank_of_pid(r.pid);
      if (rank.rank) l.push_back({"rank", std::to_string(*rank.rank)});
      if (rank.local_rank) l.push_back({"local_rank", std::to_string(*rank.local_rank)});
      if (rank.world_size) l.push_back({"world_size", std::to_string(*rank.world_size)});
    }
    return l;
  };
  struct Other {
    std::uint64_t waits = 0, total_ns = 0;
  };
  std::map<HostWaitKind, Other> other;
  for (const auto& r : rows) {
    if (kept[r.pid]) continue;
    other[r.kind].waits += r.calls;
    other[r.kind].total_ns += r.total_ns;
  }
  auto other_labels = [](HostWaitKind kind) {
    return Labels{{"pid", "other"}, {"comm", "other"}, {"kind", std::string(host_wait_kind_name(kind))}};
  };

  begin_family(out, "eacgm_host_waits_total");
  for (const auto& r : rows) {
    if (kept[r.pid]) out.add(labels(r), r.calls);
  }
  for (const auto& [kind, o] : other) out.add(other_labels(kind), o.waits);
  begin_family(out, "eacgm_host_wait_seconds_total");
  for (const auto& r : rows) {
    if (kept[r.pid]) out.add(labels(r), static_cast<double>(r.total_ns) / 1e9);
  }
  for (const auto& [kind, o] : other) out.add(other_labels(kind), static_cast<double>(o.total_ns) / 1e9);

  begin_family(out, "eacgm_host_wait_duration_seconds");
  for (std::size_t k = 0; k < kHostWaitKinds; ++k) {
    const auto& sketch = waits.by_kind[k];
    if (sketch.count() == 0) continue;
    out.add_histogram({{"kind", std::string(host_wait_kind_name(static_cast<HostWaitKind>(k)))}},
                      fold_sketch(sketch), static_cast<double>(sketch.sum()) / 1e9, sketch.count());
  }
}

}  // namespace eacgm::exporting
