// KernelStats: launches per kernel name and their distinct launch shapes.
#include "analysis/kernel_stats.h"

#include <algorithm>
#include <tuple>

namespace eacgm::analysis {

namespace {
// Probes whose argument slots are remembered by address; past this many (re-attached
// probes get new ProbeInfo objects) they are looked up by name each time.
constexpr std::size_t kMaxPinnedProbes = 4096;

bool is_dim3(ArgKind k) {
  return k == ArgKind::kDim3 || k == ArgKind::kDerefDim3 || k == ArgKind::kDim3Split;
}

int dim3_arg(const ProbeSpec& spec, std::string_view name) {
  for (std::size_t i = 0; i < spec.args.size() && i < kMaxArgs; ++i) {
    if (spec.args[i].name == name && is_dim3(spec.args[i].kind)) return static_cast<int>(i);
  }
  return -1;
}

bool readable(const CallEvent& e, int i) { return i >= 0 && i < e.nargs && !(e.fault_mask & (1u << i)); }

Dim3 dim3_of(const CallEvent& e, int i) {
  const std::uint64_t v = e.args[static_cast<std::size_t>(i)];
  return {static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32),
          e.ext[static_cast<std::size_t>(i)]};
}
}  // namespace

KernelStats::LaunchArgs KernelStats::launch_args(const CallEvent& event) {
  const ProbeInfo* probe = event.probe.get();
  if (auto it = by_probe_.find(probe); it != by_probe_.end()) return it->second;
  LaunchArgs a{dim3_arg(probe->spec, "grid"), dim3_arg(probe->spec, "block")};
  if (pinned_.size() < kMaxPinnedProbes) {
    by_probe_.emplace(probe, a);
    pinned_.push_back(event.probe);
  }
  return a;
}

void KernelStats::add(const CallCount& count) {
  // Counted launches (always-on): the kernel by its handle's name; no shapes captured.
  // A per-call probe's counts (ProbeInfo::tallied): its records name its launches.
  if (count.probe == nullptr || count.calls == 0 || count.probe->tallied) return;
  // A hook's launch counts are per function only; its per-kernel counts are GPU time's.
  if (count.probe->hook || dim3_arg(count.probe->spec, "grid") < 0) return;
  if (count.kernel.empty()) {
    unnamed_.add(count.pid, count.handle, count.stream, count.calls);
    return;
  }
  std::uint64_t launches = count.calls;
  for (const auto& [stream, n] : unnamed_.take(count.pid, count.handle)) launches += n;
  KernelRow* k = entry(count.kernel, launches);
  if (k == nullptr) return;
  k->launches += launches;
  k->unknown_shape += launches;
}

void KernelStats::add(const CallEvent& event) {
  // Launches carry the kernel's name; a driver launch made by a runtime launch is
  // nested and already counted by it.
  if (event.graph && !event.nested && !event.is_error()) {
    add_graph_launch(*event.graph);
    return;
  }
  if (event.kernel.empty() || event.nested || event.captured || event.probe == nullptr) return;
  if (event.probe->spec.work == GpuWork::kGraphNode) return;  // recorded into a graph, not launched
  const LaunchArgs args = launch_args(event);
  if (args.grid < 0 && args.block < 0) return;  // a naming call (cuModuleGetFunction), not a launch
  KernelRow* row = entry(event.kernel, 1);
  if (row == nullptr) return;
  KernelRow& k = *row;
  ++k.launches;
  if (event.is_error()) ++k.errors;
  if (!readable(event, args.grid) || !readable(event, args.block)) {
    ++k.unknown_shape;
    return;
  }
  const Dim3 grid = dim3_of(event, args.grid);
  const Dim3 block = dim3_of(event, args.block);
  auto it = std::find_if(k.shapes.begin(), k.shapes.end(),
                         [&](const KernelShape& s) { return s.grid == grid && s.block == block; });
  if (it != k.shapes.end()) {
    ++it->launches;
  } else if (k.shapes.size() < options_.max_shapes) {
    k.shapes.push_back({grid, block, 1});
  } else {
    ++k.folded_shapes;
  }
}

KernelRow* KernelStats::entry(const std::string& name, std::uint64_t launches) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return &entries_[it->second];
  if (entries_.size() >= options_.max_kernels) {
    folded_launches_ += launches;
    return nullptr;
  }
  by_name_.emplace(name, entries_.size());
  entries_.push_back(KernelRow{name, 0, 0, {}, 0, 0});
  return &entries_.back();
}

// A graph launch runs its graph's kernels; their shapes were not captured per node.
void KernelStats::add_graph_launch(const GraphWork& graph) {
  for (const auto& item : graph.items) {
    if (item.kind != GpuWork::kKernel || item.name.empty()) continue;
    if (KernelRow* k = entry(item.name, item.count)) {
      k->launches += item.count;
      k->unknown_shape += item.count;
    }
  }
}

std::vector<KernelRow> KernelStats::rows() const {
  std::vector<KernelRow> out = entries_;
  for (auto& k : out) {
    std::sort(k.shapes.begin(), k.shapes.end(), [](const KernelShape& a, const KernelShape& b) {
      return std::tie(b.launches, a.grid, a.block) < std::tie(a.launches, b.grid, b.block);
    });
  }
  std::sort(out.begin(), out.end(), [](const KernelRow& a, const KernelRow& b) {
    return std::tie(b.launches, a.name) < std::tie(a.launches, b.name);
  });
  return out;
}

}  // namespace eacgm::analysis
