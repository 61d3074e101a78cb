// KernelStats: per kernel name, the launches (runtime or driver API; a driver launch
// nested under a runtime launch is the same launch and is skipped), their errors, and
// the distinct (grid, block) shapes launched, bounded in kernels and shapes per kernel.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/unnamed_launches.h"
#include "core/call_counts.h"
#include "core/call_event.h"

namespace eacgm::analysis {

using Dim3 = std::array<std::uint32_t, 3>;

struct KernelShape {
  Dim3 grid{};
  Dim3 block{};
  std::uint64_t launches = 0;
};

struct KernelRow {
  std::string name;
  std::uint64_t launches = 0;
  std::uint64_t errors = 0;
  std::vector<KernelShape> shapes;  // most launches first (then by grid, block)
  std::uint64_t folded_shapes = 0;  // launches of shapes past the per-kernel cap
  std::uint64_t unknown_shape = 0;  // launches whose grid or block could not be read, and
                                    // kernels run by CUDA graph launches
};

class KernelStats {
 public:
  struct Options {
    std::size_t max_kernels = 2000;
    std::size_t max_shapes = 16;  // per kernel
  };
  KernelStats() : KernelStats(Options{}) {}
  explicit KernelStats(const Options& options) : options_(options) {}

  // Counts launches with a kernel name (CallEvent::kernel) that are not nested nor
  // captured into a graph, and the kernels of each graph launch; other events are
  // ignored after a few compares.
  void add(const CallEvent& event);
  // Launches counted in the kernel (always-on), named by their handle; their shapes are
  // not captured and count as unknown. Launches counted before their handle was named
  // are held and join the name's row once a count brings it.
  void add(const CallCount& count);

  // Most launches first, then by name.
  std::vector<KernelRow> rows() const;
  // Launches of kernels past max_kernels (only counted).
  std::uint64_t folded_launches() const { return folded_launches_; }

 private:
  // Where a probe's grid and block are (-1: it has none, so it is not a launch).
  struct LaunchArgs {
    int grid = -1;
    int block = -1;
  };
  LaunchArgs launch_args(const CallEvent& event);
  // The row of `name`, made if there is room; nullptr (launches counted as folded) if not.
  KernelRow* entry(const std::string& name, std::uint64_t launches);
  void add_graph_launch(const GraphWork& graph);

  Options options_;
  std::vector<KernelRow> entries_;
  std::unordered_map<std::string, std::size_t> by_name_;
  std::unordered_map<const ProbeInfo*, LaunchArgs> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  std::uint64_t folded_launches_ = 0;
  UnnamedLaunches unnamed_;
};

}  // namespace eacgm::analysis
