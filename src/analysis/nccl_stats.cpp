// NcclStats: NCCL calls grouped by communicator and function.
#include "analysis/nccl_stats.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace eacgm::analysis {

namespace {
constexpr std::size_t kMaxPinnedProbes = 4096;
}  // namespace

const BytesRule* NcclStats::rule_for(const CallEvent& event) {
  const ProbeInfo* probe = event.probe.get();
  if (auto it = by_probe_.find(probe); it != by_probe_.end()) return &it->second;
  BytesRule rule = probe->spec.domain == "nccl" ? BytesRule::of(probe->spec) : BytesRule{};
  if (pinned_.size() < kMaxPinnedProbes) {
    pinned_.push_back(event.probe);
    return &by_probe_.emplace(probe, rule).first->second;
  }
  scratch_ = rule;
  return &scratch_;
}

void NcclStats::add(const CallEvent& event) {
  if (event.probe == nullptr || event.nested) return;
  const BytesRule* rule = rule_for(event);
  if (!rule->has_bytes()) return;
  std::string key(sizeof event.nccl_comm_id, '\0');
  std::memcpy(key.data(), &event.nccl_comm_id, sizeof event.nccl_comm_id);
  key.append(event.probe->function);
  std::size_t index;
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    index = it->second;
  } else if (entries_.size() < options_.max_keys) {
    index = entries_.size();
    Entry e;
    e.comm_id = event.nccl_comm_id;
    e.function = event.probe->function;
    entries_.push_back(std::move(e));
    by_key_.emplace(std::move(key), index);
  } else {
    ++folded_calls_;
    return;
  }
  Entry& e = entries_[index];
  ++e.calls;
  if (event.is_error()) ++e.errors;
  if (auto b = rule->bytes(event)) e.bytes += *b;
  if (event.nccl_rank >= 0) e.rank = event.nccl_rank;
  if (event.nccl_nranks >= 0) e.nranks = event.nccl_nranks;
  if (event.has_exit) e.durations.add(event.dur_ns);
}

std::vector<NcclRow> NcclStats::rows() const {
  std::vector<NcclRow> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) {
    NcclRow r;
    r.comm_id = e.comm_id;
    r.function = e.function;
    r.rank = e.rank;
    r.nranks = e.nranks;
    r.calls = e.calls;
    r.errors = e.errors;
    r.bytes = e.bytes;
    r.timed = e.durations.count();
    r.p50_ns = e.durations.quantile(0.5);
    r.p99_ns = e.durations.quantile(0.99);
    r.max_ns = e.durations.max();
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const NcclRow& a, const NcclRow& b) {
    return std::tie(b.bytes, b.calls, a.comm_id, a.function) <
           std::tie(a.bytes, a.calls, b.comm_id, b.function);
  });
  return out;
}

}  // namespace eacgm::analysis
