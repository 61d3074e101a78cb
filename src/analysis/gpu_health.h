// GpuHealth: the GPU health events of the sampling passes (XID errors, ECC and remapped
// rows, clock slowdowns, PCIe replays, a GPU lost), each with the processes on that GPU
// and the waiting calls each was in at that moment, so a fault is seen beside the work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/gpu_sample.h"
#include "core/inflight_call.h"

namespace eacgm::analysis {

// A waiting call of a process on the GPU, from the last scan of the calls in flight.
struct GpuEventCall {
  std::uint32_t tid = 0;
  std::string domain;
  std::string function;
  std::uint64_t ts_ns = 0;   // the entry (ns since the Unix epoch)
  std::uint64_t age_ns = 0;  // the scan's time minus the entry's
};

struct GpuEventProcess {
  std::uint32_t pid = 0;
  std::string comm;                 // NVML's name, else the traced thread's comm
  std::vector<GpuEventCall> calls;  // empty: in no waiting call at the last scan
};

struct GpuHealthEvent {
  std::uint64_t ts_ns = 0;  // the sampling pass's start
  unsigned gpu = 0;
  std::string uuid;
  std::string kind;                        // "xid", "ecc_uncorrected", "hw_slowdown", ... (docs/gpu.md)
  std::string detail;                      // "XID 79", "ECC uncorrected +2", "hw_slowdown began"
  std::uint64_t count = 1;                 // what the counter rose by (1 for a transition)
  std::vector<GpuEventProcess> processes;  // on the GPU in that pass, by pid
};

// Per GPU and kind since the start, for the counter metric: the events' counts summed
// (an ECC count that rose by 2 adds 2).
struct GpuHealthCount {
  unsigned gpu = 0;
  std::string uuid;
  std::string name;
  std::string pci_bus_id;
  std::string kind;
  std::uint64_t events = 0;
};

struct GpuHealthSummary {
  std::vector<GpuHealthEvent> events;  // the last kMaxEvents, oldest first
  std::uint64_t total = 0;             // every event since the start
  std::uint64_t dropped = 0;           // older events no longer listed
  std::vector<GpuHealthCount> counts;  // by GPU index, then kind
};

class GpuHealth {
 public:
  static constexpr std::size_t kMaxEvents = 256;
  static constexpr std::size_t kMaxProcesses = 32;  // per event
  static constexpr std::size_t kMaxCalls = 4;       // per process

  // The last scan of the calls in flight (any age), for the events that follow.
  void set_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns);
  // A sampling pass: an event for each change since the GPU's previous pass (a counter
  // that rose, a slowdown or flag that began, the GPU lost). A GPU's first pass, and its
  // first after it was lost, only sets what later passes are compared with (an XID the
  // first pass already counts is in eacgm_gpu_xid_errors_total, not an event). Returns
  // how many events it added.
  std::size_t update(const GpuSnapshot& pass);
  const GpuHealthSummary& summary() const;

 private:
  void add(GpuHealthEvent event, const DeviceSample& gpu, const GpuSnapshot& pass);
  std::vector<GpuEventProcess> processes_on(const DeviceSample& gpu, const GpuSnapshot& pass) const;

  std::unordered_map<std::string, DeviceSample> last_;                  // by UUID (else "#index")
  std::unordered_map<std::uint32_t, std::vector<GpuEventCall>> calls_;  // by pid
  std::unordered_map<std::uint32_t, std::string> comms_;                // by pid
  std::deque<GpuHealthEvent> events_;
  std::map<std::pair<unsigned, std::string>, GpuHealthCount> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t dropped_ = 0;
  mutable GpuHealthSummary summary_;
  mutable bool stale_ = false;
};

}  // namespace eacgm::analysis
