// The host-wait tracer's reader: turns the kernel's cumulative per-(process, kind, bucket)
// wait histograms into deltas since the last drain, hands on each waiting process once
// (name, start) and again at its exit, watches the processes that make traced calls when
// the whole machine is traced, and deletes an exited process's keys once its last waits
// are read. Runs on the reader thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/consumer.h"
#include "core/host_wait.h"
#include "probe/host_wait_tracer.h"

namespace eacgm::ingest {

// Where the drain reads from: the loaded tracer, or a test's recorded maps.
class HostWaitSource {
 public:
  virtual ~HostWaitSource() = default;
  virtual std::vector<probe::HostWaitEntry> read_waits() = 0;
  // The processes with waits, as the kernel recorded them.
  virtual std::vector<std::pair<std::uint32_t, eacgm_wait_proc>> read_processes() = 0;
  // Watches a process (a no-op where the watched processes are the trace's pid filter).
  virtual void watch(std::uint32_t pid) = 0;
  virtual std::vector<std::uint32_t> watched() = 0;
  // Deletes these processes' keys and stops watching them.
  virtual void forget(const std::vector<std::uint32_t>& pids) = 0;
};

// The loaded tracer.
class BpfHostWaitSource final : public HostWaitSource {
 public:
  explicit BpfHostWaitSource(probe::HostWaitTracer& tracer) : tracer_(tracer) {}
  std::vector<probe::HostWaitEntry> read_waits() override { return tracer_.read(); }
  std::vector<std::pair<std::uint32_t, eacgm_wait_proc>> read_processes() override {
    return tracer_.read_processes();
  }
  void watch(std::uint32_t pid) override { (void)tracer_.watch(pid); }  // a full map: left unwatched
  std::vector<std::uint32_t> watched() override { return tracer_.watched(); }
  void forget(const std::vector<std::uint32_t>& pids) override { tracer_.forget(pids); }

 private:
  probe::HostWaitTracer& tracer_;
};

struct HostWaitDrainCounters {
  std::uint64_t waits = 0;           // waits delivered, in total
  std::uint64_t processes = 0;       // processes with waits held now
  std::uint64_t unknown_kind = 0;    // keys of a kind this build does not know (dropped)
  std::uint64_t forgotten_pids = 0;  // exited processes whose keys were deleted
};

class HostWaitDrain {
 public:
  using CommOf = std::function<std::string(std::uint32_t pid)>;
  // `comm_of`: a process's name where the kernel kept none (default: /proc/<pid>/comm,
  // "" once it is gone).
  explicit HostWaitDrain(HostWaitSource& source, CommOf comm_of = {});

  // Reads the maps; `waits` gets what changed since the last drain, `processes` the
  // processes new since then or whose start (an exec) or exit changed since.
  void drain(std::vector<HostWaitProcess>& processes, std::vector<HostWaitTimings>& waits);
  // Watches the process of a traced call (whole-machine traces); cheap when known.
  void watch(std::uint32_t pid);
  // Deletes the keys (and the watch) of processes for which `alive(pid)` is false (call
  // right after a drain, so their last waits were delivered); returns how many.
  std::size_t forget_unless(const std::function<bool(std::uint32_t)>& alive);
  const HostWaitDrainCounters& counters() const { return counters_; }

 private:
  struct Seen {
    std::uint64_t count = 0, sum_ns = 0;
  };
  struct KeyHash {
    std::size_t operator()(const eacgm_wait_key& k) const {
      return (std::uint64_t{k.pid} << 32 | k.kind) * 0x9e3779b97f4a7c15ull ^ k.bucket;
    }
  };
  struct KeyEq {
    bool operator()(const eacgm_wait_key& a, const eacgm_wait_key& b) const {
      return a.pid == b.pid && a.kind == b.kind && a.bucket == b.bucket;
    }
  };
  HostWaitSource& source_;
  CommOf read_comm_;
  std::unordered_map<eacgm_wait_key, Seen, KeyHash, KeyEq> seen_;
  // Processes handed on -> their start_ns and exit_ns then.
  std::unordered_map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> known_;
  std::uint32_t last_watched_ = 0;
  HostWaitDrainCounters counters_;
};

// Watches the processes of the calls and counts it sees (whole-machine traces), then
// leaves them to the consumers after it in a ConsumerList.
class HostWaitWatch final : public Consumer {
 public:
  explicit HostWaitWatch(HostWaitDrain& drain) : drain_(drain) {}
  void on_calls(std::span<const CallEvent> calls) override;
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override;

 private:
  HostWaitDrain& drain_;
};

}  // namespace eacgm::ingest
