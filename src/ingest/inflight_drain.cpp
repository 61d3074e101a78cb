// InflightDrain: the calls in flight from the kernel's table (ingest/inflight_drain.h).
#include "ingest/inflight_drain.h"

#include <algorithm>
#include <utility>

namespace eacgm::ingest {
namespace {

// Keeps the communicator's fields the chain stamped, instead of passing the call on.
class StampSink final : public CallSink {
 public:
  explicit StampSink(CallEvent& into) : into_(into) {}
  void take(CallEvent& event) override {
    into_.nccl_rank = event.nccl_rank;
    into_.nccl_nranks = event.nccl_nranks;
    into_.nccl_comm_id = event.nccl_comm_id;
  }

 private:
  CallEvent& into_;
};

}  // namespace

InflightCall inflight_call(const eacgm_call_in_flight& entry, std::shared_ptr<const ProbeInfo> probe,
                           const WallClock& wall) {
  InflightCall out;
  out.entry_mono_ns = entry.ts_ns;
  CallEvent& e = out.call;
  e.ts_ns = wall.from_monotonic(entry.ts_ns);
  e.pid = entry.pid;
  e.tid = entry.tid;
  std::copy_n(entry.comm, e.comm.size(), e.comm.begin());
  e.comm.back() = '\0';
  const auto& args = probe->spec.args;
  e.nargs = static_cast<std::uint8_t>(std::min<std::size_t>({entry.nargs, args.size(), kMaxArgs}));
  std::uint32_t unknown = ~static_cast<std::uint32_t>(entry.read_mask) | entry.fault_mask;
  for (std::size_t i = 0; i < e.nargs; ++i) {
    e.args[i] = entry.args[i];
    // The entry holds an out-parameter's pointer and a string's address, not their values.
    if (args[i].at_exit || args[i].kind == ArgKind::kString) unknown |= 1u << i;
  }
  // A pointer chain's link is as known as the argument it reads through (earlier ones
  // are settled first).
  for (std::size_t i = 0; i < e.nargs; ++i) {
    if (args[i].source == ArgSource::kArg && args[i].index < i && ((unknown >> args[i].index) & 1) != 0) {
      unknown |= 1u << i;
    }
  }
  e.fault_mask = static_cast<std::uint8_t>(unknown & ((1u << e.nargs) - 1));
  e.probe = std::move(probe);
  return out;
}

std::uint64_t InflightDrain::drain(std::vector<InflightCall>& calls) {
  const std::vector<eacgm_call_in_flight> entries = source_.read();
  const std::uint64_t now = monotonic_ns();
  ++counters_.scans;
  std::size_t listed = 0;
  for (const eacgm_call_in_flight& entry : entries) {
    if (entry.ts_ns == 0) continue;  // the thread is in no waiting call now
    const std::shared_ptr<const ProbeInfo>& probe = probes_.get(entry.probe_id);
    if (!probe) {
      ++counters_.unknown_probe;
      continue;
    }
    const bool nccl = probe->spec.domain == "nccl";
    calls.push_back(inflight_call(entry, probe, wall_));
    ++listed;
    if (nccl) {
      // The communicator's rank, size and id, as the stage stamps the call's record.
      CallEvent copy = calls.back().call;
      StampSink sink(calls.back().call);
      chain_.process(copy, sink);
    }
  }
  counters_.in_flight = listed;
  return now;
}

}  // namespace eacgm::ingest
