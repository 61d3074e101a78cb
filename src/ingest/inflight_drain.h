// The reader of the kernel's table of waiting calls in flight (bpf/events.h struct
// eacgm_call_in_flight): once a tick, turns the entry of each thread inside a waiting
// call into an InflightCall (its probe, its entry time on the wall clock, the arguments
// the entry read, the NCCL communicator's fields through the enricher chain). Runs on the
// reader thread; the table holds the threads that have made a waiting call (alive), so a
// read is one small batch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/clock.h"
#include "core/inflight_call.h"
#include "ingest/enricher.h"
#include "probe/bpf_tracer.h"
#include "probe/probe_table.h"

namespace eacgm::ingest {

// Where the drain reads from: the loaded BPF side, or a test's recorded entries.
class InflightSource {
 public:
  virtual ~InflightSource() = default;
  virtual std::vector<eacgm_call_in_flight> read() = 0;
};

class BpfInflightSource final : public InflightSource {
 public:
  explicit BpfInflightSource(probe::BpfTracer& bpf) : bpf_(bpf) {}
  std::vector<eacgm_call_in_flight> read() override { return bpf_.read_calls_in_flight(); }

 private:
  probe::BpfTracer& bpf_;
};

struct InflightDrainCounters {
  std::uint64_t scans = 0;
  std::uint64_t in_flight = 0;      // calls in flight at the last scan
  std::uint64_t unknown_probe = 0;  // entries whose probe id names no probe (left out)
};

class InflightDrain {
 public:
  InflightDrain(InflightSource& source, const probe::ProbeTable& table, EnricherChain& chain)
      : source_(source), probes_(table), chain_(chain) {}

  // Reads the table: `calls` gets every call in flight (in no order); returns when the
  // table was read (CLOCK_MONOTONIC ns), the time their ages are taken at.
  std::uint64_t drain(std::vector<InflightCall>& calls);
  const InflightDrainCounters& counters() const { return counters_; }

 private:
  InflightSource& source_;
  probe::ProbeCache probes_;  // the reader thread's view: no lock per entry
  EnricherChain& chain_;
  WallClock wall_;
  InflightDrainCounters counters_;
};

// The call an entry of the table describes, `probe` its probe: the arguments it did not
// read, or read as something other than their value (an out-parameter's pointer, a
// string's address), are marked unknown in fault_mask.
InflightCall inflight_call(const eacgm_call_in_flight& entry, std::shared_ptr<const ProbeInfo> probe,
                           const WallClock& wall);

}  // namespace eacgm::ingest
