// NcclGpuFigures: GPU time and bandwidth of one NCCL row.
#include "analysis/nccl_gpu_figures.h"

#include <bit>

#include "analysis/nccl_bandwidth.h"

namespace eacgm::analysis {

void NcclGpuFigures::Throughput::add(std::uint64_t size, double bus_factor, std::uint64_t ns_add,
                                     bool first) {
  if (size == 0) return;
  if (first) bytes += static_cast<double>(size);
  ns += ns_add;
  if (bus_factor < 0) return;
  if (first) bus_bytes += static_cast<double>(size) * bus_factor;
  bus_ns += ns_add;
}

void NcclGpuFigures::add(std::uint64_t duration_ns, bool queued, bool first, std::uint64_t calls,
                         std::uint64_t size, double bus_factor) {
  ++kernels_;
  if (!queued) ++idle_starts_;
  if (first) calls_ += calls;
  durations_.add(duration_ns);
  throughput_.add(size, bus_factor, duration_ns, first);
  if (size == 0) return;
  Size& s = sizes_[static_cast<unsigned>(std::bit_width(size) - 1)];
  if (s.calls == 0 || size < s.min_bytes) s.min_bytes = size;
  if (size > s.max_bytes) s.max_bytes = size;
  if (first) s.calls += calls;
  s.durations.add(duration_ns);
  s.throughput.add(size, bus_factor, duration_ns, first);
}

NcclGpuTime NcclGpuFigures::figures() const {
  NcclGpuTime t;
  t.calls = calls_;
  t.kernels = kernels_;
  t.idle_starts = idle_starts_;
  t.p50_ns = durations_.quantile(0.5);
  t.p99_ns = durations_.quantile(0.99);
  t.max_ns = static_cast<double>(durations_.max());
  t.gpu_ns = durations_.sum();
  if (throughput_.ns > 0) t.algbw = bytes_per_second(throughput_.bytes, throughput_.ns);
  if (throughput_.bus_ns > 0) t.busbw = bytes_per_second(throughput_.bus_bytes, throughput_.bus_ns);
  for (const auto& [bits, s] : sizes_) {
    NcclGpuSize out;
    out.min_bytes = s.min_bytes;
    out.max_bytes = s.max_bytes;
    out.calls = s.calls;
    out.p50_ns = s.durations.quantile(0.5);
    if (s.throughput.ns > 0) out.algbw = bytes_per_second(s.throughput.bytes, s.throughput.ns);
    if (s.throughput.bus_ns > 0) out.busbw = bytes_per_second(s.throughput.bus_bytes, s.throughput.bus_ns);
    t.sizes.push_back(out);
  }
  return t;
}

}  // namespace eacgm::analysis
