// InflightCalls: the waiting calls that have been in flight for at least a minimum age
// ([hangs] min_age_s), from each scan of the kernel's table: per call its thread, probe,
// arguments and age at the scan, oldest first, the calls of threads that no longer run
// left out. A long wait is listed with its age whatever it waits for (a data loader's
// first batch, a checkpoint barrier); saying which waits are hangs is left to rules over
// it.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <vector>

#include "core/inflight_call.h"

namespace eacgm::analysis {

struct InflightRow {
  InflightCall call;
  std::uint64_t age_ns = 0;  // the scan's time minus the entry's
};

struct InflightSummary {
  std::uint64_t min_age_ns = 0;    // the threshold the rows passed
  std::uint64_t scan_mono_ns = 0;  // when the table was read (CLOCK_MONOTONIC); 0: never
  std::uint64_t in_flight = 0;     // calls in flight at the scan, of any age
  std::vector<InflightRow> rows;   // at least min_age_ns old, oldest first
  std::uint64_t over_cap = 0;      // old enough, past kMaxRows rows: left out (the youngest)
};

class InflightCalls {
 public:
  // The default threshold ([hangs] min_age_s = 5).
  static constexpr std::uint64_t kDefaultMinAgeNs = 5'000'000'000;
  // Rows listed at most (the kernel's table holds 4096 threads).
  static constexpr std::size_t kMaxRows = 1000;
  using ThreadAlive = std::function<bool(std::uint32_t pid, std::uint32_t tid)>;

  explicit InflightCalls(std::uint64_t min_age_ns = kDefaultMinAgeNs);

  // From the next scan on.
  void set_min_age_ns(std::uint64_t min_age_ns) { min_age_ns_ = min_age_ns; }
  // How a thread's life is checked (default: thread_alive, /proc); for tests.
  void set_thread_alive(ThreadAlive alive) { alive_ = std::move(alive); }

  // A scan: `calls` are every call in flight when the table was read at `scan_mono_ns`.
  // Replaces the last scan's rows. A call's thread is checked when the call is first
  // listed (old enough, within the cap); once listed, it stays listed while the table
  // holds it (a thread that exits takes its entry out of the kernel's table).
  void update(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns);
  const InflightSummary& summary() const { return summary_; }

 private:
  // A listed call: its thread and entry time (a thread's next call has another).
  struct Listed {
    std::uint32_t tid = 0;
    std::uint64_t entry_mono_ns = 0;
    bool operator<(const Listed& o) const {
      return tid != o.tid ? tid < o.tid : entry_mono_ns < o.entry_mono_ns;
    }
  };
  std::uint64_t min_age_ns_;
  ThreadAlive alive_;
  InflightSummary summary_;
  std::set<Listed> listed_;  // the last scan's rows
};

// Whether thread `tid` of process `pid` exists (tgkill with signal 0).
bool thread_alive(std::uint32_t pid, std::uint32_t tid);

}  // namespace eacgm::analysis
