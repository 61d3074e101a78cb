// NcclGpuFigures: GPU time and bandwidth of one NCCL row.
#include "analysis/nccl_gpu_figures.h"

#include <bit>

namespace eacgm::analysis {

void NcclGpuFigures::Part::add(std::uint64_t duration_ns, bool first, std::uint64_t calls_add,
                               std::uint64_t size, double bus_factor) {
  if (first) calls += calls_add;
  durations.add(duration_ns);
  if (size == 0) return;
  const double s = first ? static_cast<double>(size) : 0.0;
  algorithm.add(s, duration_ns);
  if (bus_factor >= 0) bus.add(s * bus_factor, duration_ns);
}

void NcclGpuFigures::add(std::uint64_t duration_ns, bool queued, bool first, std::uint64_t calls,
                         std::uint64_t size, double bus_factor) {
  ++kernels_;
  if (!queued) ++idle_starts_;
  all_.add(duration_ns, first, calls, size, bus_factor);
  if (size == 0) return;
  Size& s = sizes_[static_cast<unsigned>(std::bit_width(size) - 1)];
  if (s.part.calls == 0 || size < s.min_bytes) s.min_bytes = size;
  if (size > s.max_bytes) s.max_bytes = size;
  s.part.add(duration_ns, first, calls, size, bus_factor);
}

NcclGpuTime NcclGpuFigures::figures() const {
  NcclGpuTime t;
  t.calls = all_.calls;
  t.kernels = kernels_;
  t.idle_starts = idle_starts_;
  t.p50_ns = all_.durations.quantile(0.5);
  t.p99_ns = all_.durations.quantile(0.99);
  t.max_ns = static_cast<double>(all_.durations.max());
  t.gpu_ns = all_.durations.sum();
  t.algbw = all_.algorithm.bandwidth();
  t.busbw = all_.bus.bandwidth();
  for (const auto& [bits, s] : sizes_) {
    t.sizes.push_back(NcclGpuSize{.min_bytes = s.min_bytes,
                                  .max_bytes = s.max_bytes,
                                  .calls = s.part.calls,
                                  .p50_ns = s.part.durations.quantile(0.5),
                                  .algbw = s.part.algorithm.bandwidth(),
                                  .busbw = s.part.bus.bandwidth()});
  }
  return t;
}

}  // namespace eacgm::analysis
