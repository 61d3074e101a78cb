// CountDrain: deltas of the always-on maps (ingest/count_drain.h).
#include "ingest/count_drain.h"

#include <set>

#include "ingest/gone_pids.h"

namespace eacgm::ingest {
namespace {

// A cumulative map value's part since the last drain, which it then becomes; all of it
// when the key was made anew (`restarted`) or the value went back.
std::uint64_t delta_since(bool restarted, std::uint64_t now, std::uint64_t& before) {
  const std::uint64_t d = restarted || now < before ? now : now - before;
  before = now;
  return d;
}

// Keeps what the chain hands out, instead of passing it to the consumers.
class KeepSink final : public CallSink {
 public:
  void take(CallEvent& event) override { kernel = event.kernel; }
  std::string kernel;
};

// Where a spec reads the kernel handle from (its kKernelName derived arg), or -1.
int handle_index(const ProbeSpec& spec) {
  for (const auto& d : spec.derived) {
    if (d.op == DerivedArg::Op::kKernelName) return arg_index(spec, d.from);
  }
  return -1;
}

}  // namespace

std::string CountDrain::name_of(const std::shared_ptr<const ProbeInfo>& probe, std::uint32_t pid,
                                std::uint64_t handle) {
  const int index = handle_index(probe->spec);
  if (index < 0 || handle == 0) return {};
  // The same stages that name a traced launch name this handle.
  CallEvent e;
  e.pid = pid;
  e.tid = pid;
  e.probe = probe;
  e.has_exit = true;
  e.nargs = static_cast<std::uint8_t>(index + 1);
  e.args[static_cast<std::size_t>(index)] = handle;
  KeepSink sink;
  chain_.process(e, sink);
  return sink.kernel;
}

void CountDrain::drain(std::vector<CallCount>& counts, std::vector<CallTimings>& timings,
                       const std::function<void()>& after_read,
                       const std::function<bool(std::uint32_t)>& alive) {
  ++counters_.drains;
  std::vector<std::uint32_t> ended = alive ? gone(alive) : std::vector<std::uint32_t>{};
  const std::vector<probe::CountEntry> entries = source_.read_counts();
  if (after_read) after_read();
  for (const probe::CountEntry& e : entries) {
    auto probe = table_.get(e.key.probe_id);
    Seen& s = seen_[e.key];  // kept for unknown probes too, so that their keys are deleted
    if (!probe) {
      ++counters_.unknown_probe;
      continue;
    }
    // Fewer calls than last time: the key was deleted and made anew (a reused pid).
    const bool restarted = e.calls < s.calls;
    const auto since = [restarted](std::uint64_t now, std::uint64_t& before) {
      return delta_since(restarted, now, before);
    };
    const std::uint64_t calls = since(e.calls, s.calls);
    const std::uint64_t bytes = since(e.bytes, s.bytes);
    const std::uint64_t windowed = since(e.windowed, s.windowed);
    const std::uint64_t switching = since(e.switching, s.switching);
    const PaceGaps gaps{since(e.gaps.in_ns, s.gaps.in_ns), since(e.gaps.in, s.gaps.in),
                        since(e.gaps.out_ns, s.gaps.out_ns), since(e.gaps.out, s.gaps.out)};
    if (calls == 0) continue;
    if (!s.named) {
      s.kernel = name_of(probe, e.key.pid, e.key.handle);
      s.named = !s.kernel.empty();
    }
    counters_.counted_calls += calls;
    CallCount c{e.key.pid, std::move(probe), e.key.handle, e.key.stream, s.kernel, calls, bytes};
    c.windowed = windowed;
    c.switching = switching;
    c.gaps = gaps;
    counts.push_back(std::move(c));
  }
  counters_.keys = seen_.size();
  for (const probe::DurationEntry& e : source_.read_durations()) {
    auto probe = table_.get(e.key.probe_id);
    SeenTiming& s = seen_timings_[e.key];
    if (!probe) continue;
    const bool restarted = e.count < s.count;
    const auto since = [restarted](std::uint64_t now, std::uint64_t& before) {
      return delta_since(restarted, now, before);
    };
    CallTimings t{e.key.pid,
                  std::move(probe),
                  e.key.bucket,
                  since(e.count, s.count),
                  since(e.sum_ns, s.sum_ns),
                  since(e.errors, s.errors),
                  since(e.held, s.held),
                  since(e.held_sum_ns, s.held_sum_ns),
                  since(e.held_delay_ns, s.held_delay_ns)};
    if (t.count == 0) continue;
    counters_.sampled_calls += t.count;
    counters_.sampled_held_calls += t.held;
    timings.push_back(std::move(t));
  }
  if (!source_.read_complete()) ended.clear();  // their keys go after the next read
  forget(ended);
}

std::vector<std::uint32_t> CountDrain::gone(const std::function<bool(std::uint32_t)>& alive) const {
  std::set<std::uint32_t> pids;
  for (const auto& [k, v] : seen_) pids.insert(k.pid);
  for (const auto& [k, v] : seen_timings_) pids.insert(k.pid);
  return gone_pids(pids, alive);
}

std::size_t CountDrain::forget_unless(const std::function<bool(std::uint32_t)>& alive) {
  return forget(gone(alive));
}

std::size_t CountDrain::forget(const std::vector<std::uint32_t>& gone) {
  if (gone.empty()) return 0;
  const std::set<std::uint32_t> doomed(gone.begin(), gone.end());
  std::vector<eacgm_count_key> counts;
  std::vector<eacgm_duration_key> durations;
  std::erase_if(seen_, [&](const auto& kv) {
    if (!doomed.contains(kv.first.pid)) return false;
    counts.push_back(kv.first);
    return true;
  });
  std::erase_if(seen_timings_, [&](const auto& kv) {
    if (!doomed.contains(kv.first.pid)) return false;
    durations.push_back(kv.first);
    return true;
  });
  source_.forget_keys(gone, counts, durations);
  counters_.forgotten_pids += gone.size();
  counters_.keys = seen_.size();
  return gone.size();
}

}  // namespace eacgm::ingest
