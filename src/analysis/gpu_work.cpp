// GpuWorkStats: counting each GPU operation once, per process, stream and name.
#include "analysis/gpu_work.h"

#include <algorithm>

namespace eacgm::analysis {
namespace {
// Probes whose rules are remembered by address (see KernelStats).
constexpr std::size_t kMaxPinnedProbes = 4096;
}  // namespace

std::string_view gpu_work_kind_name(GpuWork kind) {
  switch (kind) {
    case GpuWork::kKernel:
      return "kernel";
    case GpuWork::kMemset:
      return "memset";
    case GpuWork::kCopy:
      return "copy";
    case GpuWork::kGraphLaunch:
      return "graph_launch";
    case GpuWork::kGraphNode:
      return "graph_node";
    case GpuWork::kNone:
      break;
  }
  return "";
}

const WorkRule& GpuWorkStats::rule(const CallEvent& event) {
  const ProbeInfo* probe = event.probe.get();
  if (auto it = rules_.find(probe); it != rules_.end()) return it->second;
  if (pinned_.size() >= kMaxPinnedProbes) {
    scratch_ = WorkRule::of(probe->spec);
    return scratch_;
  }
  pinned_.push_back(event.probe);
  return rules_.emplace(probe, WorkRule::of(probe->spec)).first->second;
}

void GpuWorkStats::count(std::uint32_t pid, std::string_view comm, std::uint64_t stream, GpuWork kind,
                         const std::string& name, const std::string& direction, std::uint64_t n,
                         std::uint64_t graph_n, bool error, std::uint64_t bytes) {
  totals_[kind] += n;
  Key key{pid, stream, kind, name, direction};
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    if (rows_.size() >= options_.max_rows) {
      folded_ += n;
      return;
    }
    GpuWorkRow row;
    row.pid = pid;
    row.comm = std::string(comm);
    row.stream = stream;
    row.kind = kind;
    row.name = name;
    row.direction = direction;
    it = rows_.emplace(std::move(key), std::move(row)).first;
  }
  // A call after the exit was seen: the pid is another process's now, and runs.
  processes_[pid].exit.seq = 0;
  it->second.count += n;
  it->second.graph += graph_n;
  it->second.errors += error ? 1 : 0;
  it->second.bytes += bytes;
}

void GpuWorkStats::add(const CallEvent& event) {
  // Once per operation: the nested driver call under a runtime call is the same one;
  // captured work runs when its graph is launched.
  if (event.nested || event.captured || event.probe == nullptr) return;
  const WorkRule& r = rule(event);
  const GpuWork kind = r.kind();
  if (kind == GpuWork::kNone || kind == GpuWork::kGraphNode) return;
  const std::uint64_t stream = r.stream(event);
  if (kind == GpuWork::kGraphLaunch) {
    if (event.is_error()) return;
    if (!event.graph) {
      ++unknown_graph_launches_;
      return;
    }
    for (const auto& item : event.graph->items) {
      count(event.pid, event.comm_view(), stream, item.kind, item.name, item.direction, item.count,
            item.count, false, item.bytes);
    }
    return;
  }
  static const std::string kNoName;
  const std::string direction(r.direction(event));
  const std::uint64_t bytes = kind == GpuWork::kKernel ? 0 : r.bytes(event).value_or(0);
  count(event.pid, event.comm_view(), stream, kind, kind == GpuWork::kKernel ? event.kernel : kNoName,
        direction, 1, 0, event.is_error(), bytes);
}

void GpuWorkStats::add(const CallCount& c) {
  // Counted in the kernel (always-on): one layer per operation, so nothing is nested;
  // graph launches are traced per call and never arrive here.
  // A per-call probe's counts: its records say what work each call issued.
  if (c.probe == nullptr || c.calls == 0 || c.probe->tallied) return;
  const WorkRule r = WorkRule::of(c.probe->spec);
  const GpuWork kind = r.kind();
  if (kind != GpuWork::kKernel && kind != GpuWork::kMemset && kind != GpuWork::kCopy) return;
  // A hook counts launches per driver function only (GPU time has them per kernel).
  if (kind == GpuWork::kKernel && c.probe->hook) return;
  static const std::string kNoName;
  if (kind == GpuWork::kKernel) {
    if (c.kernel.empty()) {
      unnamed_.add(c.pid, c.handle, c.stream, c.calls);
    } else {
      for (const auto& [stream, n] : unnamed_.take(c.pid, c.handle)) {
        name_late(c.pid, stream, c.probe->spec.direction, c.kernel, n);
      }
    }
  }
  count(c.pid, "", c.stream, kind, kind == GpuWork::kKernel ? c.kernel : kNoName, c.probe->spec.direction,
        c.calls, 0, false, kind == GpuWork::kKernel ? 0 : c.bytes);
}

void GpuWorkStats::name_late(std::uint32_t pid, std::uint64_t stream, const std::string& direction,
                             const std::string& name, std::uint64_t n) {
  static const std::string kNoName;
  auto it = rows_.find(Key{pid, stream, GpuWork::kKernel, kNoName, direction});
  if (it == rows_.end()) return;  // folded past max_rows: they stay there
  n = std::min(n, it->second.count);
  const std::string comm = it->second.comm;
  it->second.count -= n;
  if (it->second.count == 0) rows_.erase(it);
  totals_[GpuWork::kKernel] -= n;  // count() adds them again: a move, not new launches
  count(pid, comm, stream, GpuWork::kKernel, name, direction, n, 0, false, 0);
}

void GpuWorkStats::sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
                         std::size_t max_checks, Clock::duration grace) {
  exits_.sweep(processes_, now, is_alive, max_checks, grace, options_.max_exited, [this](auto found) {
    const std::uint32_t pid = found->first;
    processes_.erase(found);
    // The rows are ordered by pid first: the process's rows are one range.
    auto row = rows_.lower_bound(Key{pid, 0, GpuWork::kNone, {}, {}});
    while (row != rows_.end() && std::get<0>(row->first) == pid) row = rows_.erase(row);
    unnamed_.forget(pid);
  });
}

std::vector<GpuWorkRow> GpuWorkStats::rows() const {
  std::vector<GpuWorkRow> out;
  out.reserve(rows_.size());
  for (const auto& [key, row] : rows_) out.push_back(row);
  std::stable_sort(out.begin(), out.end(),
                   [](const GpuWorkRow& a, const GpuWorkRow& b) { return a.count > b.count; });
  return out;
}

std::uint64_t GpuWorkStats::total(GpuWork kind) const {
  auto it = totals_.find(kind);
  return it == totals_.end() ? 0 : it->second;
}

}  // namespace eacgm::analysis
