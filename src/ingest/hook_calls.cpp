#include "ingest/hook_calls.h"

#include <algorithm>

#include "bpf/events.h"
#include "probe/catalog.h"

namespace eacgm::ingest {

std::shared_ptr<const ProbeInfo> HookCalls::probe_of(const std::string& function, bool counted) {
  if (auto it = probes_.find({function, counted}); it != probes_.end()) return it->second;
  if (specs_.empty()) {
    for (ProbeSpec& s : probe::cuda_driver_catalog().specs) specs_.emplace(s.name, std::move(s));
  }
  std::shared_ptr<const ProbeInfo> probe;
  if (auto spec = specs_.find(function); spec != specs_.end()) {
    auto info = std::make_shared<ProbeInfo>();
    info->id = kHookProbeIdBase + static_cast<std::uint32_t>(probes_.size());
    info->function = spec->second.name;
    info->symbol = spec->second.symbol;
    info->library = "libeacgm_hook.so";
    info->spec = spec->second;
    info->counted = counted;
    info->hook = true;
    probe = std::move(info);
  }
  // Unknown names too, once each: the hook's table is fixed, so this map is bounded by it.
  probes_.emplace(std::pair{function, counted}, probe);
  return probe;
}

void HookCalls::events(const GpuTimeBatch& batch, std::vector<CallEvent>& out) {
  if (batch.memory.empty()) return;
  std::map<std::uint32_t, const std::string*> comms;
  for (const GpuRingState& r : batch.rings) comms[r.pid] = &r.comm;
  for (const GpuMemoryCall& c : batch.memory) {
    std::shared_ptr<const ProbeInfo> probe = probe_of(c.function, false);
    if (!probe) continue;
    CallEvent e;
    e.ts_ns = clock_.from_monotonic(c.begin_ns);
    e.dur_ns = c.duration_ns;
    e.pid = c.pid;
    e.tid = c.tid;
    if (auto it = comms.find(c.pid); it != comms.end())
      it->second->copy(e.comm.data(), std::min(it->second->size(), e.comm.size() - 1));
    e.has_exit = true;
    e.ret = c.result;
    e.nested = c.by_runtime;
    const auto& args = probe->spec.args;
    e.nargs = static_cast<std::uint8_t>(std::min(args.size(), kMaxArgs));
    for (std::size_t i = 0; i < e.nargs; ++i) {
      const std::string& name = args[i].name;
      if (name == "ptr" || name == "handle") {
        e.args[i] = c.address;
      } else if (name == "size" || name == "pitch") {
        e.args[i] = c.bytes;
      } else if (name == "height") {
        e.args[i] = c.rows;
      } else {
        e.fault_mask |= static_cast<std::uint8_t>(1u << i);  // not sent: unread
      }
    }
    e.probe = std::move(probe);
    out.push_back(std::move(e));
  }
}

void HookCalls::deltas(const GpuTimeBatch& batch, std::vector<CallCount>& out,
                       std::vector<CallTimings>& timings) {
  for (const GpuCallCount& c : batch.calls) {
    std::shared_ptr<const ProbeInfo> probe = probe_of(c.function);
    if (!probe) continue;
    Sent& sent = sent_[{c.pid, c.function}];
    if (c.calls <= sent.calls) continue;  // nothing new (or an older record)
    CallCount n;
    n.pid = c.pid;
    n.probe = std::move(probe);
    n.calls = c.calls - sent.calls;
    n.bytes = c.bytes >= sent.bytes ? c.bytes - sent.bytes : 0;
    sent = Sent{c.calls, c.bytes};
    out.push_back(std::move(n));
  }
  for (const GpuWaitTimes& w : batch.waits) {
    std::shared_ptr<const ProbeInfo> probe = probe_of(w.function);
    if (!probe) continue;
    WaitSent& sent = waits_sent_[{w.pid, w.function, w.bucket}];
    if (w.calls <= sent.calls || w.ns < sent.ns) continue;  // nothing new (or an older record)
    CallTimings t;
    t.pid = w.pid;
    t.probe = std::move(probe);
    t.count = w.calls - sent.calls;
    t.sum_ns = w.ns - sent.ns;
    t.errors = w.failed >= sent.failed ? w.failed - sent.failed : 0;
    t.bucket = eacgm_hist_key(t.sum_ns / t.count);
    sent = WaitSent{w.calls, w.ns, w.failed};
    timings.push_back(std::move(t));
  }
  for (const GpuRingState& r : batch.rings) {
    if (!r.exited) continue;
    for (auto it = sent_.lower_bound({r.pid, std::string()}); it != sent_.end() && it->first.first == r.pid;)
      it = sent_.erase(it);
    for (auto it = waits_sent_.lower_bound({r.pid, std::string(), 0});
         it != waits_sent_.end() && std::get<0>(it->first) == r.pid;)
      it = waits_sent_.erase(it);
  }
}

}  // namespace eacgm::ingest
