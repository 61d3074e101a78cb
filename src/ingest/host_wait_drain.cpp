// HostWaitDrain: deltas of the host-wait histograms (ingest/host_wait_drain.h).
#include "ingest/host_wait_drain.h"

#include <cstring>
#include <set>

#include "core/proc_file.h"
#include "ingest/gone_pids.h"

namespace eacgm::ingest {
namespace {

std::optional<HostWaitKind> kind_of(std::uint32_t kind) {
  switch (kind) {
    case EACGM_WAIT_FUTEX:
      return HostWaitKind::kFutex;
    case EACGM_WAIT_INPUT:
      return HostWaitKind::kInputWait;
    default:
      return std::nullopt;
  }
}

}  // namespace

HostWaitDrain::HostWaitDrain(HostWaitSource& source, CommOf comm_of)
    : source_(source),
      read_comm_(comm_of ? std::move(comm_of)
                         : CommOf([](std::uint32_t pid) { return read_proc_comm(pid); })) {}

void HostWaitDrain::drain(std::vector<HostWaitProcess>& processes, std::vector<HostWaitTimings>& out) {
  for (const probe::HostWaitEntry& e : source_.read_waits()) {
    const auto kind = kind_of(e.key.kind);
    if (!kind) {
      ++counters_.unknown_kind;
      continue;
    }
    Seen& s = seen_[e.key];
    // Fewer than last time: the key was deleted and made anew (a reused pid).
    const bool restarted = e.count < s.count;
    HostWaitTimings t;
    t.pid = e.key.pid;
    t.kind = *kind;
    t.bucket = e.key.bucket;
    t.count = restarted ? e.count : e.count - s.count;
    t.sum_ns = restarted ? e.sum_ns : e.sum_ns - s.sum_ns;
    s = Seen{e.count, e.sum_ns};
    if (t.count == 0) continue;
    counters_.waits += t.count;
    out.push_back(t);
  }
  // After the histograms: the kernel records a process with its first histogram key, so
  // every process of these waits is there.
  for (const auto& [pid, proc] : source_.read_processes()) {
    auto known = known_.find(pid);
    if (known != known_.end() && known->second == std::pair(proc.start_ns, proc.exit_ns)) continue;
    HostWaitProcess p;
    p.pid = pid;
    p.comm.assign(proc.comm, ::strnlen(proc.comm, sizeof(proc.comm)));
    if (p.comm.empty()) p.comm = read_comm_(pid);
    p.start_ns = proc.start_ns;
    p.exit_ns = proc.exit_ns;
    known_[pid] = {proc.start_ns, proc.exit_ns};
    processes.push_back(std::move(p));
  }
  counters_.processes = known_.size();
}

void HostWaitDrain::watch(std::uint32_t pid) {
  if (pid == last_watched_) return;
  last_watched_ = pid;
  source_.watch(pid);
}

std::size_t HostWaitDrain::forget_unless(const std::function<bool(std::uint32_t)>& alive) {
  std::set<std::uint32_t> pids;
  for (const auto& [k, v] : seen_) pids.insert(k.pid);
  for (const auto& [pid, times] : known_) pids.insert(pid);
  for (std::uint32_t pid : source_.watched()) pids.insert(pid);
  const std::vector<std::uint32_t> gone = gone_pids(pids, alive);
  if (gone.empty()) return 0;
  source_.forget(gone);
  const std::set<std::uint32_t> doomed(gone.begin(), gone.end());
  std::erase_if(seen_, [&](const auto& kv) { return doomed.contains(kv.first.pid); });
  std::erase_if(known_, [&](const auto& kv) { return doomed.contains(kv.first); });
  if (doomed.contains(last_watched_)) last_watched_ = 0;
  counters_.forgotten_pids += gone.size();
  counters_.processes = known_.size();
  return gone.size();
}

void HostWaitWatch::on_calls(std::span<const CallEvent> calls) {
  for (const auto& e : calls) drain_.watch(e.pid);
}

void HostWaitWatch::on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  (void)timings;  // a timed call was counted too
  for (const auto& c : counts) drain_.watch(c.pid);
}

}  // namespace eacgm::ingest
