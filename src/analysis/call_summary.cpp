// CallSummary: key lookup (probe pointer first, names on a miss), bounded key set, and
// the sorted snapshot rows.
#include "analysis/call_summary.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace eacgm::analysis {

namespace {
// Re-attached probes get new ProbeInfo objects; past this many pinned probes new ones
// are resolved by name every time rather than pinned, so memory stays bounded.
constexpr std::size_t kPinnedProbesPerKey = 4;

std::string name_key(std::string_view domain, std::string_view function) {
  std::string key;
  key.reserve(domain.size() + 1 + function.size());
  key.append(domain);
  key.push_back('\0');  // cannot appear in either name, so keys do not collide
  key.append(function);
  return key;
}
}  // namespace

CallSummary::CallSummary(const Options& options, LatencySketch prototype)
    : max_keys_(options.max_keys), prototype_(std::move(prototype)) {}

Result<CallSummary> CallSummary::create(const Options& options) {
  if (options.max_keys == 0) {
    return make_error("call summary: max_keys is 0; use at least 1 (4096 covers every built-in catalog)");
  }
  auto sketch = LatencySketch::create(options.sketch);
  if (!sketch) return make_error("call summary: " + sketch.error());
  return CallSummary(options, std::move(sketch).value());
}

std::uint32_t CallSummary::slot_by_name(std::string_view domain, std::string_view function) {
  std::string key = name_key(domain, function);
  if (auto it = by_name_.find(key); it != by_name_.end()) return it->second;
  if (entries_.size() >= max_keys_) return kNoEntry;
  const auto slot = static_cast<std::uint32_t>(entries_.size());
  Entry entry;
  entry.domain = std::string(domain);
  entry.function = std::string(function);
  entry.durations = prototype_;
  entries_.push_back(std::move(entry));
  by_name_.emplace(std::move(key), slot);
  return slot;
}

CallSummary::ProbeSlot CallSummary::slot_for(const std::shared_ptr<const ProbeInfo>& shared) {
  const ProbeInfo* probe = shared.get();
  if (probe == nullptr) return {slot_by_name("", ""), {}};
  if (probe == last_probe_) return last_slot_;
  ProbeSlot slot;
  if (auto it = by_probe_.find(probe); it != by_probe_.end()) {
    slot = it->second;
  } else {
    slot = {slot_by_name(probe->spec.domain, probe->function), BytesRule::of(probe->spec)};
    // Overflowed keys are not pinned (that would grow the map without bound); their
    // events pay a name lookup each time, which is the rare, already-degraded case.
    if (slot.slot == kNoEntry || pinned_.size() >= kPinnedProbesPerKey * max_keys_) return slot;
    by_probe_.emplace(probe, slot);
    pinned_.push_back(shared);
  }
  last_probe_ = probe;
  last_slot_ = slot;
  return slot;
}

void CallSummary::add(const CallEvent& event) {
  // A tallied call was counted by its probe's CallCount: its record adds only what it did.
  if (!event.tallied) ++total_events_;
  const ProbeSlot slot = slot_for(event.probe);
  if (slot.slot == kNoEntry) {
    if (!event.tallied) ++overflow_events_;
    return;
  }
  Entry& e = entries_[slot.slot];
  if (event.nested) {
    ++e.nested;  // already counted (and timed) by the outer call that made it
    return;
  }
  if (!event.tallied) ++e.calls;
  if (slot.bytes.has_bytes()) {
    e.has_bytes = true;
    if (auto b = slot.bytes.bytes(event)) e.bytes += *b;
  }
  if (!event.has_exit) {
    ++e.entry_only;
    return;
  }
  if (event.is_error()) {
    ++e.errors;
    const std::int64_t code =
        event.probe->spec.ret == ReturnKind::kInt32 ? static_cast<std::int32_t>(event.ret) : event.ret;
    auto it = std::find_if(e.error_codes.begin(), e.error_codes.end(),
                           [code](const ErrorCodeCount& c) { return c.code == code; });
    if (it != e.error_codes.end()) {
      ++it->count;
    } else if (e.error_codes.size() < kMaxErrorCodes) {
      e.error_codes.push_back({code, 1});
    }
  }
  e.durations.add(event.dur_ns);
}

void CallSummary::add(const CallCount& count) {
  total_events_ += count.calls;
  const ProbeSlot slot = slot_for(count.probe);
  if (slot.slot == kNoEntry) {
    overflow_events_ += count.calls;
    return;
  }
  Entry& e = entries_[slot.slot];
  e.calls += count.calls;
  // A per-call probe's calls counted at entry: each has its record too, unless the ring
  // dropped it.
  if (count.probe && count.probe->tallied) {
    e.tallied = true;
    return;
  }
  e.counted += count.calls;
  if (count.estimated) {
    e.estimated += count.calls;
    e.variance += count.variance;
  }
  if (slot.bytes.has_bytes()) {
    e.has_bytes = true;
    e.bytes += count.bytes;
  }
}

void CallSummary::add(const CallTimings& timings) {
  const ProbeSlot slot = slot_for(timings.probe);
  if (slot.slot == kNoEntry) return;
  Entry& e = entries_[slot.slot];
  e.durations.add_bucket(timings.bucket, EACGM_HIST_BITS, timings.count, timings.sum_ns);
  e.errors += timings.errors;
  e.sampled_errors += timings.errors;
}

CallSummary CallSummary::frozen() const {
  CallSummary out(Options{{}, max_keys_}, prototype_);
  out.entries_.reserve(entries_.size());
  for (const Entry& e : entries_) {
    Entry copy;
    static_cast<Figures&>(copy) = e;
    copy.durations = e.durations.compact();
    out.entries_.push_back(std::move(copy));
  }
  out.by_name_ = by_name_;
  out.overflow_events_ = overflow_events_;
  out.total_events_ = total_events_;
  return out;
}

std::size_t CallSummary::heap_bytes() const {
  // A string's characters past the inline buffer; a hash node's key, value and link.
  const auto chars = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
  std::size_t bytes = entries_.capacity() * sizeof(Entry) + pinned_.capacity() * sizeof(pinned_[0]);
  for (const Entry& e : entries_) {
    bytes += chars(e.domain) + chars(e.function) + e.durations.heap_bytes() +
             e.error_codes.capacity() * sizeof(ErrorCodeCount);
  }
  for (const auto& [key, slot] : by_name_)
    bytes += sizeof(void*) * 2 + sizeof(std::string) + sizeof(slot) + chars(key);
  bytes += by_name_.bucket_count() * sizeof(void*);
  bytes +=
      by_probe_.size() * (sizeof(void*) * 2 + sizeof(ProbeSlot)) + by_probe_.bucket_count() * sizeof(void*);
  return bytes;
}

std::vector<CallSummaryRow> CallSummary::rows(bool quantiles) const {
  std::vector<CallSummaryRow> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) {
    CallSummaryRow r;
    r.domain = e.domain;
    r.function = e.function;
    r.calls = e.calls;
    r.errors = e.errors;
    r.entry_only = e.entry_only;
    r.nested = e.nested;
    r.timed = e.durations.count();
    r.total_ns = e.durations.sum();
    r.counted = e.counted;
    r.sampled_errors = e.sampled_errors;
    r.estimated = e.estimated;
    r.calls_error = std::sqrt(e.variance);
    // Counted calls are timed one in N: their total time is estimated from the mean.
    // Tallied calls whose records the ring dropped were counted, not timed: the same.
    if ((e.counted > 0 && r.timed > 0 && r.timed < r.calls) ||
        (e.tallied && r.timed > 0 && r.timed + r.entry_only < r.calls)) {
      r.total_ns =
          static_cast<std::uint64_t>(e.durations.mean() * static_cast<double>(r.calls - r.entry_only));
    }
    r.mean_ns = e.durations.mean();
    if (quantiles) {
      r.p50_ns = e.durations.quantile(0.5);
      r.p99_ns = e.durations.quantile(0.99);
    }
    r.sketch = &e.durations;
    r.max_ns = e.durations.max();
    r.bytes = e.bytes;
    r.has_bytes = e.has_bytes;
    r.error_codes = e.error_codes;
    std::sort(r.error_codes.begin(), r.error_codes.end(),
              [](const ErrorCodeCount& a, const ErrorCodeCount& b) {
                return std::tie(b.count, a.code) < std::tie(a.count, b.code);
              });
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const CallSummaryRow& a, const CallSummaryRow& b) {
    return std::tie(b.total_ns, b.calls, a.domain, a.function) <
           std::tie(a.total_ns, a.calls, b.domain, b.function);
  });
  return out;
}

const LatencySketch* CallSummary::sketch(std::string_view domain, std::string_view function) const {
  auto it = by_name_.find(name_key(domain, function));
  return it == by_name_.end() ? nullptr : &entries_[it->second].durations;
}

}  // namespace eacgm::analysis
