// NcclStats: NCCL calls grouped by communicator and function.
#include "analysis/nccl_stats.h"

#include <algorithm>
#include <tuple>

namespace eacgm::analysis {

void NcclStats::add(const CallEvent& event) {
  if (event.probe == nullptr || event.nested) return;
  const NcclProbeRule& rule = rules_.of(event);
  if (!rule.bytes.has_bytes()) return;
  const Key key{event.nccl_comm_id, rule.function};
  std::size_t index;
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    index = it->second;
  } else if (entries_.size() < options_.max_keys) {
    index = entries_.size();
    Entry e;
    e.comm_id = event.nccl_comm_id;
    e.function = rule.function;
    entries_.push_back(std::move(e));
    by_key_.emplace(key, index);
  } else {
    ++folded_calls_;
    return;
  }
  Entry& e = entries_[index];
  ++e.calls;
  if (event.is_error()) ++e.errors;
  const auto b = rule.bytes.bytes(event);
  if (b) e.bytes += *b;
  if (event.nccl_rank >= 0) e.rank = event.nccl_rank;
  if (event.nccl_nranks >= 0) e.nranks = event.nccl_nranks;
  if (event.has_exit) e.durations.add(event.dur_ns);
  if (!nccl_call_issued(event)) return;
  // nccl-tests' size S and bus factor, for the host-side bandwidth (timed calls) and for
  // the GPU time of the call's kernel, joined later.
  const auto s = b ? nccl_algorithm_bytes(rule.kind, *b, event.nccl_nranks) : std::nullopt;
  const auto factor = nccl_bus_factor(rule.kind, event.nccl_nranks);
  if (s && event.dur_ns > 0) {
    e.algorithm.add(static_cast<double>(*s), event.dur_ns);
    if (factor) e.bus.add(static_cast<double>(*s) * *factor, event.dur_ns);
  }
  const NcclIssuedCall call{.ts_ns = event.ts_ns,
                            .end_ns = event.ts_ns + event.dur_ns,
                            .entry = static_cast<std::uint32_t>(index),
                            .size = s.value_or(0),
                            .bus_factor = factor.value_or(-1.0)};
  join_.add_call(event.pid, event.tid, call, joined_);
  apply_joined();
}

void NcclStats::add_gpu(const GpuSpan& span, std::uint64_t launch_ns) {
  if (!span.nccl || span.graph) return;
  join_.add_kernel(span.pid, span.tid,
                   {.launch_ns = launch_ns, .duration_ns = span.duration_ns, .queued = span.queued}, joined_);
  apply_joined();
}

void NcclStats::settle(std::uint64_t before_ns) {
  join_.settle(before_ns, joined_);
  apply_joined();
}

void NcclStats::apply_joined() {
  for (const NcclJoined& j : joined_) {
    const auto& calls = j.calls;
    // One call, or a group's calls of one row (several rows share the kernel's time).
    if (calls.empty() || calls.front().entry >= entries_.size()) {
      ++gpu_unjoined_;
      continue;
    }
    std::uint64_t size = 0;
    bool sized = true;
    bool one_row = true;
    for (const auto& c : calls) {
      one_row = one_row && c.entry == calls.front().entry;
      sized = sized && c.size > 0 && !__builtin_add_overflow(size, c.size, &size);
    }
    if (!one_row) {
      ++gpu_unjoined_;
      continue;
    }
    entries_[calls.front().entry].gpu.add(j.kernel.duration_ns, j.kernel.queued, !calls.front().joined,
                                          calls.size(), sized ? size : 0, calls.front().bus_factor);
  }
  joined_.clear();
}

std::vector<NcclRow> NcclStats::rows() const {
  std::vector<NcclRow> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) {
    NcclRow r;
    r.comm_id = e.comm_id;
    r.function = rules_.function_name(e.function);
    r.rank = e.rank;
    r.nranks = e.nranks;
    r.calls = e.calls;
    r.errors = e.errors;
    r.bytes = e.bytes;
    r.timed = e.durations.count();
    r.p50_ns = e.durations.quantile(0.5);
    r.p99_ns = e.durations.quantile(0.99);
    r.max_ns = e.durations.max();
    r.bandwidth_calls = e.algorithm.calls;
    r.algbw = e.algorithm.bandwidth();
    r.busbw = e.bus.bandwidth();
    if (!e.gpu.empty()) r.gpu = e.gpu.figures();
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const NcclRow& a, const NcclRow& b) {
    return std::tie(b.bytes, b.calls, a.comm_id, a.function) <
           std::tie(a.bytes, a.calls, b.comm_id, b.function);
  });
  return out;
}

}  // namespace eacgm::analysis
