// The always-on maps' reader: turns the kernel's cumulative per-(process, probe, handle)
// counts and sampled-duration buckets into deltas since the last drain, names launch
// handles through the enricher chain, and deletes an exited process's keys once its
// last counts are read. Runs on the reader thread.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "core/call_counts.h"
#include "ingest/enricher.h"
#include "probe/bpf_tracer.h"
#include "probe/probe_table.h"

namespace eacgm::ingest {

// Where the drain reads from: the loaded BPF side, or a test's recorded maps.
class CountSource {
 public:
  virtual ~CountSource() = default;
  virtual std::vector<probe::CountEntry> read_counts() = 0;
  virtual std::vector<probe::DurationEntry> read_durations() = 0;
  // The keys of exited processes (`pids`), every one of them read since they exited:
  // deleted as they are, without a walk of the maps.
  virtual void forget_keys(const std::vector<std::uint32_t>& pids, const std::vector<eacgm_count_key>& counts,
                           const std::vector<eacgm_duration_key>& durations) = 0;
  // Whether the last reads saw every key: a key left unread may have counted since its
  // last read, so no key is deleted after a read that missed some.
  virtual bool read_complete() const { return true; }
};

// The BPF maps of a tracer.
class BpfCountSource final : public CountSource {
 public:
  explicit BpfCountSource(probe::BpfTracer& bpf) : bpf_(bpf) {}
  std::vector<probe::CountEntry> read_counts() override { return bpf_.read_counts(); }
  std::vector<probe::DurationEntry> read_durations() override { return bpf_.read_durations(); }
  void forget_keys(const std::vector<std::uint32_t>&, const std::vector<eacgm_count_key>& counts,
                   const std::vector<eacgm_duration_key>& durations) override {
    bpf_.forget_counts(counts, durations);
  }
  bool read_complete() const override { return bpf_.last_read_complete(); }

 private:
  probe::BpfTracer& bpf_;
};

struct CountDrainCounters {
  std::uint64_t drains = 0;
  std::uint64_t keys = 0;                // count keys held now (one per process, probe, handle)
  std::uint64_t unknown_probe = 0;       // keys whose probe id names no probe (dropped)
  std::uint64_t forgotten_pids = 0;      // exited processes whose keys were deleted
  std::uint64_t counted_calls = 0;       // calls delivered as counts, in total
  std::uint64_t sampled_calls = 0;       // of those, timed
  std::uint64_t sampled_held_calls = 0;  // of those, held off the CPU half their time or more
};

class CountDrain {
 public:
  CountDrain(CountSource& source, const probe::ProbeTable& table, EnricherChain& chain)
      : source_(source), table_(table), chain_(chain) {}

  // Reads the maps; `counts` and `timings` get what changed since the last drain.
  // `after_read` runs between reading the maps and naming their launch handles: the
  // reader takes in the ring buffer's records there, so that every naming call made
  // before a counted launch has reached the chain when the launch is named. With `alive`,
  // the processes it finds gone before the read have their keys deleted right after it:
  // a process can count no more once gone, so that read holds its last counts (one found
  // gone only after the read might have counted in between).
  void drain(std::vector<CallCount>& counts, std::vector<CallTimings>& timings,
             const std::function<void()>& after_read = {},
             const std::function<bool(std::uint32_t)>& alive = {});
  // Deletes the keys of processes for which `alive(pid)` is false (call right after a
  // drain, so their last counts were delivered); returns how many processes.
  std::size_t forget_unless(const std::function<bool(std::uint32_t)>& alive);
  const CountDrainCounters& counters() const { return counters_; }

 private:
  struct Seen {
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;
    std::uint64_t windowed = 0;
    std::uint64_t switching = 0;
    PaceGaps gaps;
    std::string kernel;
    bool named = false;  // the kernel name was looked up and found
  };
  struct SeenTiming {
    std::uint64_t count = 0, sum_ns = 0, errors = 0, held = 0, held_sum_ns = 0, held_delay_ns = 0;
  };
  struct KeyHash {
    std::size_t operator()(const eacgm_count_key& k) const {
      return std::hash<std::uint64_t>()(k.handle) ^
             (std::uint64_t{k.pid} << 32 | k.probe_id) * 0x9e3779b97f4a7c15ull;
    }
    std::size_t operator()(const eacgm_duration_key& k) const {
      return (std::uint64_t{k.pid} << 32 | k.probe_id) * 0x9e3779b97f4a7c15ull ^ k.bucket;
    }
  };
  struct KeyEq {
    bool operator()(const eacgm_count_key& a, const eacgm_count_key& b) const {
      return a.pid == b.pid && a.probe_id == b.probe_id && a.handle == b.handle && a.stream == b.stream;
    }
    bool operator()(const eacgm_duration_key& a, const eacgm_duration_key& b) const {
      return a.pid == b.pid && a.probe_id == b.probe_id && a.bucket == b.bucket;
    }
  };
  // The pids that `alive` says are gone, of those with keys.
  std::vector<std::uint32_t> gone(const std::function<bool(std::uint32_t)>& alive) const;
  std::size_t forget(const std::vector<std::uint32_t>& gone);
  // The kernel name of a launch handle, from the chain's kernel-name stage.
  std::string name_of(const std::shared_ptr<const ProbeInfo>& probe, std::uint32_t pid, std::uint64_t handle);

  CountSource& source_;
  const probe::ProbeTable& table_;
  EnricherChain& chain_;
  std::unordered_map<eacgm_count_key, Seen, KeyHash, KeyEq> seen_;
  std::unordered_map<eacgm_duration_key, SeenTiming, KeyHash, KeyEq> seen_timings_;
  CountDrainCounters counters_;
};

}  // namespace eacgm::ingest
