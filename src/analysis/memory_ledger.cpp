// The memory ledger: allocation and free calls matched by address per process.
#include "analysis/memory_ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string>

namespace eacgm::analysis {
namespace {
std::string_view base_name(std::string_view f) {
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (f.size() > suffix.size() && f.ends_with(suffix)) return f.substr(0, f.size() - suffix.size());
  }
  return f;
}

bool readable(const CallEvent& e, int index) {
  return index >= 0 && index < e.nargs && (e.fault_mask & (1u << index)) == 0;
}

}  // namespace

std::string_view alloc_kind_name(AllocKind kind) {
  switch (kind) {
    case AllocKind::kDevice:
      return "device";
    case AllocKind::kAsync:
      return "async";
    case AllocKind::kManaged:
      return "managed";
    case AllocKind::kHost:
      return "host";
    case AllocKind::kPitch:
      return "pitch";
    case AllocKind::kVmm:
      return "vmm";
  }
  return "device";
}

std::size_t size_bucket(std::uint64_t size) {
  return size <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(size) - 1);
}

MemoryLedger::MemoryLedger(const MemoryLedger& o)
    : options_(o.options_),
      processes_(o.processes_),
      exited_(o.exited_),
      exited_dropped_(o.exited_dropped_),
      overflow_calls_(o.overflow_calls_),
      leaks_total_(o.leaks_total_),
      leaked_bytes_total_(o.leaked_bytes_total_),
      sweep_cursor_(o.sweep_cursor_) {}

MemoryLedger& MemoryLedger::operator=(const MemoryLedger& o) {
  if (this != &o) *this = MemoryLedger(o);
  return *this;
}

MemoryLedger::Role MemoryLedger::resolve(const ProbeInfo& probe) {
  const std::string_view f = base_name(probe.function);
  const ProbeSpec& spec = probe.spec;
  Role r;
  auto alloc = [&](AllocKind kind, const char* ptr = "ptr") {
    r.op = Op::kAlloc;
    r.kind = kind;
    r.ptr = arg_index(spec, ptr);
    r.size = arg_index(spec, "size");
  };
  if (f == "cudaMalloc" || f == "cuMemAlloc_v2") {
    alloc(AllocKind::kDevice);
  } else if (f == "cudaMallocAsync" || f == "cudaMallocFromPoolAsync" || f == "cuMemAllocAsync" ||
             f == "cuMemAllocFromPoolAsync") {
    alloc(AllocKind::kAsync);
  } else if (f == "cudaMallocManaged" || f == "cuMemAllocManaged") {
    alloc(AllocKind::kManaged);
  } else if (f == "cudaMallocHost" || f == "cudaHostAlloc" || f == "cuMemAllocHost_v2" ||
             f == "cuMemHostAlloc") {
    alloc(AllocKind::kHost);
  } else if (f == "cudaMallocPitch" || f == "cuMemAllocPitch_v2") {
    alloc(AllocKind::kPitch);
    r.size = arg_index(spec, "pitch");
    r.rows = arg_index(spec, "height");
    if (r.rows < 0) r.op = Op::kNone;
  } else if (f == "cuMemCreate") {
    alloc(AllocKind::kVmm, "handle");
    r.handle = true;
  } else if (f == "cudaFree" || f == "cudaFreeAsync" || f == "cudaFreeHost" || f == "cuMemFree_v2" ||
             f == "cuMemFreeAsync" || f == "cuMemFreeHost") {
    r.op = Op::kFree;
    r.ptr = arg_index(spec, "ptr");
  } else if (f == "cuMemRelease") {
    r.op = Op::kFree;
    r.handle = true;
    r.ptr = arg_index(spec, "handle");
  } else if (f == "cudaSetDevice") {
    r.op = Op::kSetDevice;
    r.ptr = arg_index(spec, "device");
  }
  // A spec without the arguments the ledger reads (a user's own) is not a memory call.
  if (r.ptr < 0 || (r.op == Op::kAlloc && r.size < 0)) r.op = Op::kNone;
  return r;
}

const MemoryLedger::Role& MemoryLedger::role_of(const CallEvent& event) {
  const ProbeInfo* p = event.probe.get();
  if (p == last_probe_) return last_role_;
  auto it = roles_.find(p);
  if (it == roles_.end()) {
    it = roles_.emplace(p, resolve(*p)).first;
    pinned_.push_back(event.probe);
  }
  last_probe_ = p;
  last_role_ = it->second;
  return last_role_;
}

MemoryLedger::Process* MemoryLedger::process(const CallEvent& event) {
  auto it = processes_.find(event.pid);
  if (it == processes_.end()) {
    if (processes_.size() >= options_.max_processes) {
      ++overflow_calls_;
      return nullptr;
    }
    it = processes_.emplace(event.pid, Process{}).first;
  }
  Process& p = it->second;
  if (p.comm.empty() || p.comm != event.comm_view()) p.comm = std::string(event.comm_view());
  p.gone_since.reset();  // it made a call: whatever a sweep saw was a reused pid or a race
  return &p;
}

std::int32_t MemoryLedger::device_of(const Process& p, std::uint32_t tid) const {
  auto it = p.thread_device.find(tid);
  if (it != p.thread_device.end()) return it->second;
  // No cudaSetDevice seen on this thread: device 0, the runtime's default for every
  // thread, whose primary context the driver's calls use too. (A driver program that
  // makes another device's context current, which is not traced, is counted on 0.)
  return 0;
}

void MemoryLedger::add(const CallEvent& e) {
  if (!e.probe || e.nested || !e.has_exit) return;
  const Role& r = role_of(e);
  if (r.op == Op::kNone) return;
  Process* p = process(e);
  if (p == nullptr) return;
  switch (r.op) {
    case Op::kAlloc:
      allocate(*p, e, r);
      break;
    case Op::kFree:
      release(*p, e, r);
      break;
    case Op::kSetDevice:
      if (!e.is_error() && readable(e, r.ptr)) {
        if (p->thread_device.size() >= options_.max_threads_per_process &&
            !p->thread_device.contains(e.tid)) {
          p->thread_device.clear();  // rare: a process with very many threads setting devices
        }
        p->thread_device[e.tid] = static_cast<std::int32_t>(static_cast<std::uint32_t>(e.args[r.ptr]));
      }
      break;
    case Op::kNone:
      break;
  }
}

void MemoryLedger::allocate(Process& p, const CallEvent& e, const Role& r) {
  const std::int32_t device = device_of(p, e.tid);
  Counters& c = p.devices[device];
  if (e.is_error()) {
    ++c.failed_allocations;
    const std::string_view f = e.function();
    auto it = std::find_if(c.failed_by_function.begin(), c.failed_by_function.end(),
                           [f](const FailedAllocations& x) { return x.function == f; });
    if (it == c.failed_by_function.end()) it = c.failed_by_function.insert(it, {std::string(f), 0});
    ++it->calls;
    return;
  }
  if (!readable(e, r.ptr) || !readable(e, r.size) || (r.rows >= 0 && !readable(e, r.rows))) {
    ++c.unreadable;
    return;
  }
  std::uint64_t size = e.args[r.size];
  if (r.rows >= 0) size *= e.args[r.rows];
  const std::uint64_t addr = e.args[r.ptr];
  ++c.allocations;
  c.allocated_bytes += size;
  ++c.histogram[size_bucket(size)];
  if (addr == 0) return;  // a successful allocation of 0 bytes: nothing to free
  Space& s = r.handle ? p.handles : p.addresses;
  s.freed.erase(addr);
  if (auto it = s.live.find(addr); it != s.live.end()) {
    // Allocated again without a free seen (one made before tracing began, or not
    // traced): the old allocation is gone.
    Counters& old = p.devices[it->second.device];
    old.live_bytes -= it->second.size;
    --old.live_allocations;
    s.live.erase(it);
  }
  if (p.addresses.live.size() + p.handles.live.size() >= options_.max_live_per_process) {
    ++c.dropped;
    return;
  }
  s.live.emplace(addr, Live{size, e.ts_ns, r.kind, device});
  ++c.live_allocations;
  c.live_bytes += size;
  c.peak_bytes = std::max(c.peak_bytes, c.live_bytes);
}

void MemoryLedger::remember_freed(Process& p, Space& s, std::uint64_t addr) {
  if (options_.max_freed_per_process == 0) return;
  const std::uint64_t seq = ++p.free_seq;
  s.freed[addr] = seq;
  s.order.emplace_back(addr, seq);
  while (s.order.size() > options_.max_freed_per_process) {
    auto [old, old_seq] = s.order.front();
    s.order.pop_front();
    if (auto it = s.freed.find(old); it != s.freed.end() && it->second == old_seq) s.freed.erase(it);
  }
}

void MemoryLedger::release(Process& p, const CallEvent& e, const Role& r) {
  if (!readable(e, r.ptr)) return;
  const std::uint64_t addr = e.args[r.ptr];
  if (addr == 0) return;  // cudaFree(0): a no-op (often used to create the context)
  Space& s = r.handle ? p.handles : p.addresses;
  if (auto it = s.live.find(addr); it != s.live.end()) {
    Counters& c = p.devices[it->second.device];
    if (e.is_error()) {
      ++c.failed_frees;
      return;
    }
    ++c.frees;
    c.live_bytes -= it->second.size;
    --c.live_allocations;
    s.live.erase(it);
    remember_freed(p, s, addr);
    return;
  }
  // Not live: the driver refuses such a free (an error return) or, for a pointer
  // allocated before tracing began, frees it; either way it is reported.
  Counters& c = p.devices[device_of(p, e.tid)];
  if (s.freed.contains(addr)) {
    ++c.double_frees;
  } else {
    ++c.unknown_frees;
    if (!e.is_error()) remember_freed(p, s, addr);
  }
}

MemoryLedgerRow MemoryLedger::row(std::uint32_t pid, const std::string& comm, std::int32_t device,
                                  const Counters& c) {
  MemoryLedgerRow r;
  r.pid = pid;
  r.comm = comm;
  r.device = device;
  r.allocations = c.allocations;
  r.allocated_bytes = c.allocated_bytes;
  r.frees = c.frees;
  r.failed_allocations = c.failed_allocations;
  r.failed_frees = c.failed_frees;
  r.unknown_frees = c.unknown_frees;
  r.double_frees = c.double_frees;
  r.unreadable = c.unreadable;
  r.dropped = c.dropped;
  r.live_allocations = c.live_allocations;
  r.live_bytes = c.live_bytes;
  r.peak_bytes = c.peak_bytes;
  r.size_histogram = c.histogram;
  r.failed_by_function = c.failed_by_function;
  std::stable_sort(r.failed_by_function.begin(), r.failed_by_function.end(),
                   [](const FailedAllocations& a, const FailedAllocations& b) { return a.calls > b.calls; });
  return r;
}

void MemoryLedger::finalize(std::uint32_t pid) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  Process& p = it->second;
  std::map<std::int32_t, std::vector<LeakedAllocation>> leaks;
  for (const Space* s : {&p.addresses, &p.handles}) {
    for (const auto& [addr, live] : s->live)
      leaks[live.device].push_back({addr, live.size, live.kind, live.ts_ns});
  }
  std::vector<MemoryLedgerRow> rows;
  for (const auto& [device, counters] : p.devices) {
    MemoryLedgerRow r = row(pid, p.comm, device, counters);
    r.exited = true;
    if (auto l = leaks.find(device); l != leaks.end()) {
      auto& list = l->second;
      r.leak_count = list.size();
      for (const auto& a : list) r.leak_bytes += a.size;
      leaks_total_ += r.leak_count;
      leaked_bytes_total_ += r.leak_bytes;
      const std::size_t n = std::min(list.size(), options_.largest_leaks);
      std::partial_sort(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(n), list.end(),
                        [](const LeakedAllocation& a, const LeakedAllocation& b) {
                          if (a.size != b.size) return a.size > b.size;
                          if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
                          return a.ptr < b.ptr;
                        });
      list.resize(n);
      r.largest_leaks = std::move(list);
    }
    rows.push_back(std::move(r));
  }
  processes_.erase(it);
  if (options_.max_exited == 0) {
    ++exited_dropped_;
    return;
  }
  exited_.push_back(std::move(rows));
  while (exited_.size() > options_.max_exited) {
    exited_.pop_front();
    ++exited_dropped_;
  }
}

std::size_t MemoryLedger::sweep(std::chrono::steady_clock::time_point now,
                                const std::function<bool(std::uint32_t)>& is_alive, std::size_t max_checks,
                                std::chrono::steady_clock::duration grace) {
  if (processes_.empty() || !is_alive) return 0;
  std::vector<std::uint32_t> gone;
  auto it = processes_.lower_bound(sweep_cursor_);
  for (std::size_t checked = 0; checked < max_checks && checked < processes_.size(); ++checked) {
    if (it == processes_.end()) it = processes_.begin();
    auto& [pid, p] = *it;
    if (is_alive(pid)) {
      p.gone_since.reset();
    } else {
      if (!p.gone_since) p.gone_since = now;
      if (now - *p.gone_since >= grace) gone.push_back(pid);
    }
    ++it;
  }
  sweep_cursor_ = it == processes_.end() ? 0 : it->first;
  for (std::uint32_t pid : gone) finalize(pid);
  return gone.size();
}

MemorySummary MemoryLedger::summary() const {
  MemorySummary out;
  for (const auto& [pid, p] : processes_) {
    for (const auto& [device, counters] : p.devices) out.rows.push_back(row(pid, p.comm, device, counters));
  }
  for (const auto& rows : exited_) out.rows.insert(out.rows.end(), rows.begin(), rows.end());
  out.exited_dropped = exited_dropped_;
  out.overflow_calls = overflow_calls_;
  out.leaks_total = leaks_total_;
  out.leaked_bytes_total = leaked_bytes_total_;
  return out;
}

// A zombie (Z) or dead (X) process has let its memory go.

}  // namespace eacgm::analysis
