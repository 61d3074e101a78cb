// The loaded host-wait tracer (bpf/host_waits.bpf.c): its skeleton, its links (the raw
// syscall tracepoints, process exit and exec), the map of watched processes (its own, or the tracer's pid
// filter shared), and the per-(process, kind) wait histograms the agent drains. RAII throughout.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bpf/host_waits.h"
#include "core/result.h"
#include "probe/bpf_link.h"

struct host_waits_bpf;

namespace eacgm::probe {

struct HostWaitOptions {
  // A map laid out as bpf/trace.bpf.c's `target_pids` to watch instead of the tracer's
  // own (BpfTracer::target_pids_fd: the chosen processes and their children); -1: own,
  // filled through watch().
  int shared_pids_fd = -1;
  std::uint32_t hist_keys = 65536;  // (process, kind, bucket) keys kept
  std::string btf_path;             // custom kernel BTF; empty: /sys/kernel/btf/vmlinux
};

// One key of the wait histograms, summed over CPUs (cumulative while the process lives).
struct HostWaitEntry {
  eacgm_wait_key key{};
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;
};

struct HostWaitCounters {
  std::uint64_t map_full = 0;   // waits not kept: the histogram map was full
  std::uint64_t open_full = 0;  // waits not timed: too many threads waiting at once
};

class HostWaitTracer {
 public:
  // Loads the program and attaches it to the sys_enter and sys_exit tracepoints. Errors
  // say what failed.
  static Result<std::unique_ptr<HostWaitTracer>> open(const HostWaitOptions& options);
  ~HostWaitTracer();
  HostWaitTracer(const HostWaitTracer&) = delete;
  HostWaitTracer& operator=(const HostWaitTracer&) = delete;

  // Whether the watched processes are the tracer's pid filter (then watch() and the
  // unwatching in forget() do nothing: the filter follows its processes itself).
  bool shares_pids() const { return shared_; }
  // Watches a process's waits from now on (own map only; idempotent, cheap when known).
  Status watch(std::uint32_t pid);
  // The processes watch() added and forget() has not removed.
  std::vector<std::uint32_t> watched() const;
  // Every histogram key, summed over CPUs.
  std::vector<HostWaitEntry> read() const;
  // Every process with waits: its name and start as the kernel recorded them at its
  // first, and its exit once seen.
  std::vector<std::pair<std::uint32_t, eacgm_wait_proc>> read_processes() const;
  // Deletes these processes' histogram keys and records (after their last read) and
  // stops watching them.
  void forget(const std::vector<std::uint32_t>& pids);
  HostWaitCounters counters() const;

  static constexpr std::size_t kMaxWatched = 65536;  // the watch map's size

 private:
  HostWaitTracer() = default;
  host_waits_bpf* skel_ = nullptr;
  std::vector<BpfLink> links_;
  bool shared_ = false;
  std::unordered_set<std::uint32_t> watched_;
};

}  // namespace eacgm::probe
