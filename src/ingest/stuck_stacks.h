// StuckStacks: the Python stack of each thread stuck in a waiting call. At each scan of the
// calls in flight, a call at least [hangs] min_age_s old of a process the Python sampler
// reads gets its thread's stack, read from the process's memory (read_thread_stack) and
// named by the sampler's decoder. A thread inside a call does not move its Python frames,
// so each call is read once (by thread and entry time) and its stack kept while it stays
// in flight. Bounded: a few reads per scan, oldest calls first, within a time cap (the
// rest wait for the next scan). Runs on the reader thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "bpf/py_sample.h"
#include "core/inflight_call.h"
#include "ingest/python_stacks.h"
#include "ingest/python_thread_stack.h"

namespace eacgm::ingest {

struct StuckStackOptions {
  std::uint64_t min_age_ns = 5'000'000'000;  // [hangs] min_age_s
  std::size_t max_reads_per_scan = 16;
  // Per scan: no read starts past it (the one under way finishes), so a scan's reads stay
  // within about 0.1% of a core at one scan a second even while new calls keep getting stuck.
  std::chrono::microseconds max_read_time{1000};
};

struct StuckStackCounters {
  std::uint64_t read = 0;        // stacks read and named (some with no Python frame: not shown)
  std::uint64_t unknown = 0;     // threads with no thread state found, or not told apart (3.10-)
  std::uint64_t unreadable = 0;  // processes whose memory could not be read
  std::uint64_t deferred = 0;    // reads left for a later scan by the per-scan caps
};

// What the sampler reads a process by (PySampler::process); nullopt: not a sampled process.
using PythonProcessLookup = std::function<std::optional<eacgm_py_proc>(std::uint32_t pid)>;
// The memory of a process, for the walk (tests put in a fake).
using RemoteReadFor = std::function<RemoteRead(std::uint32_t pid)>;

class StuckStacks {
 public:
  StuckStacks(PythonStackDecoder& decoder, PythonProcessLookup processes, StuckStackOptions options = {},
              RemoteReadFor memory = live_process_memory)
      : decoder_(decoder), processes_(std::move(processes)), options_(options), memory_(std::move(memory)) {}

  // Sets `python_stack` on the calls (a scan's, read at `scan_mono_ns`) that have one: read
  // now or earlier. Forgets the calls no longer in flight.
  void attach(std::vector<InflightCall>& calls, std::uint64_t scan_mono_ns);
  const StuckStackCounters& counters() const { return counters_; }

 private:
  // The stack of one call, read now; nullptr when there is none to show.
  std::shared_ptr<const PythonStack> read(const InflightCall& call, const eacgm_py_proc& proc);

  struct Key {
    std::uint32_t tid = 0;
    std::uint64_t entry_mono_ns = 0;
    auto operator<=>(const Key&) const = default;
  };
  PythonStackDecoder& decoder_;
  PythonProcessLookup processes_;
  StuckStackOptions options_;
  RemoteReadFor memory_;
  std::map<Key, std::shared_ptr<const PythonStack>> kept_;  // read (nullptr: nothing to show)
  eacgm_py_sample scratch_{};
  StuckStackCounters counters_;
};

}  // namespace eacgm::ingest
