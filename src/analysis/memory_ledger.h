// MemoryLedger: the CUDA memory each traced process holds, from the allocation and free
// calls the cuda and cuda_driver catalogs trace. Per process and device (the thread's
// last successful cudaSetDevice; without one, 0, the runtime's default device of every
// thread): live allocations by address,
// current and peak bytes, a log2 size histogram, frees of unknown pointers, double
// frees and failed allocations (by function). When a process is gone (finalize), what it never freed
// is its leaks; an exited process keeps only its summary.
//
// Counted once: calls made inside an outer traced call (the driver's cuMemAlloc_v2
// under cudaMalloc, CallEvent::nested) are left out, the outer call counts.
// Bounded: processes, live allocations per process, remembered freed addresses per
// process, threads per process, and exited processes kept.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"

namespace eacgm::analysis {

enum class AllocKind : std::uint8_t {
  kDevice,   // cudaMalloc, cuMemAlloc_v2
  kAsync,    // stream-ordered: cudaMallocAsync, cudaMallocFromPoolAsync, cuMemAlloc(FromPool)Async
  kManaged,  // cudaMallocManaged, cuMemAllocManaged
  kHost,     // page-locked host memory: cudaMallocHost, cudaHostAlloc, cuMemAllocHost_v2, cuMemHostAlloc
  kPitch,    // cudaMallocPitch, cuMemAllocPitch_v2 (pitch * height bytes)
  kVmm,      // cuMemCreate: physical memory of the virtual memory management API (a handle)
};

// "device", "async", "managed", "host", "pitch", "vmm".
std::string_view alloc_kind_name(AllocKind kind);

struct LeakedAllocation {
  std::uint64_t ptr = 0;  // the address (for kVmm: the allocation handle)
  std::uint64_t size = 0;
  AllocKind kind = AllocKind::kDevice;
  std::uint64_t ts_ns = 0;  // when it was allocated, ns since the Unix epoch
};

// Log2 buckets of allocation sizes: bucket i holds sizes in [2^i, 2^(i+1)); sizes 0
// and 1 are in bucket 0.
inline constexpr std::size_t kSizeBuckets = 64;
std::size_t size_bucket(std::uint64_t size);

// The failed calls of one allocation function, named as its call summary row names it.
struct FailedAllocations {
  std::string function;
  std::uint64_t calls = 0;
};

// One (process, device) ledger.
struct MemoryLedgerRow {
  std::uint32_t pid = 0;
  std::string comm;
  std::int32_t device = -1;           // CUDA device ordinal; -1: unknown
  std::uint64_t allocations = 0;      // successful allocation calls
  std::uint64_t allocated_bytes = 0;  // their sizes, summed
  std::uint64_t frees = 0;            // successful frees of live allocations
  // Error returns of every allocation function (runtime and driver, outer calls only, as
  // their call summary rows count errors): nothing became live.
  std::uint64_t failed_allocations = 0;
  // The same by function, most first: each equals that function's error count for the
  // process when all its calls were on this device.
  std::vector<FailedAllocations> failed_by_function;
  std::uint64_t failed_frees = 0;   // error returns for a live address: it stays live
  std::uint64_t unknown_frees = 0;  // frees of an address never seen allocated
  std::uint64_t double_frees = 0;   // frees of an address freed before and not reallocated
  std::uint64_t unreadable = 0;     // successful allocations whose address could not be read
  std::uint64_t dropped = 0;        // allocations not tracked: the process's live cap was full
  std::uint64_t live_allocations = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_bytes = 0;  // the highest live_bytes
  std::array<std::uint64_t, kSizeBuckets> size_histogram{};
  bool exited = false;
  // Exited processes: the allocations never freed (a live process has none yet).
  std::uint64_t leak_count = 0;
  std::uint64_t leak_bytes = 0;
  std::vector<LeakedAllocation> largest_leaks;  // by size, largest first
};

struct MemorySummary {
  // Live processes by pid, then device; then exited processes, oldest exit first.
  std::vector<MemoryLedgerRow> rows;
  std::uint64_t exited_dropped = 0;  // exited processes whose summary was let go (cap)
  std::uint64_t overflow_calls = 0;  // memory calls of processes beyond the process cap
  // Every exited process's leaks since the ledger began, those let go by the cap too.
  std::uint64_t leaks_total = 0;
  std::uint64_t leaked_bytes_total = 0;
  bool empty() const { return rows.empty(); }
};

class MemoryLedger {
 public:
  struct Options {
    std::size_t max_processes = 4096;            // processes with live state
    std::size_t max_live_per_process = 65536;    // live allocations tracked per process
    std::size_t max_freed_per_process = 16384;   // freed addresses remembered (double frees)
    std::size_t max_threads_per_process = 1024;  // threads whose device is remembered
    std::size_t max_exited = 1024;               // exited processes whose summary is kept
    std::size_t largest_leaks = 10;              // leaks listed per (process, device)
  };

  MemoryLedger() : MemoryLedger(Options{}) {}
  explicit MemoryLedger(Options options) : options_(options) {}
  // A copy (a snapshot) does not carry the probe cache, which points into the original.
  MemoryLedger(const MemoryLedger& o);
  MemoryLedger& operator=(const MemoryLedger& o);
  MemoryLedger(MemoryLedger&&) noexcept = default;
  MemoryLedger& operator=(MemoryLedger&&) noexcept = default;

  // On the output thread, in delivery order. Calls that are not memory calls cost one
  // cached lookup.
  void add(const CallEvent& event);

  // The process is gone: its live allocations become its leaks, its live state is
  // freed and its summary kept among the exited ones. No-op for an unknown pid.
  void finalize(std::uint32_t pid);

  // Checks up to `max_checks` held processes (round robin across calls) with
  // `is_alive`; a process found gone is finalized once it has been gone for `grace`
  // (records it made before its exit may still be on their way). Returns how many
  // were finalized.
  std::size_t sweep(std::chrono::steady_clock::time_point now,
                    const std::function<bool(std::uint32_t)>& is_alive, std::size_t max_checks,
                    std::chrono::steady_clock::duration grace);

  std::size_t process_count() const { return processes_.size(); }
  std::size_t exited_count() const { return exited_.size(); }
  MemorySummary summary() const;

 private:
  enum class Op : std::uint8_t { kNone, kAlloc, kFree, kSetDevice };
  struct Role {
    Op op = Op::kNone;
    AllocKind kind = AllocKind::kDevice;
    bool handle = false;  // the VMM handle space, apart from addresses
    int ptr = -1;         // arg index: the address (or handle, or device for kSetDevice)
    int size = -1;        // arg index: the size (pitch for kPitch)
    int rows = -1;        // arg index: kPitch's height
  };
  struct Live {
    std::uint64_t size = 0;
    std::uint64_t ts_ns = 0;
    AllocKind kind = AllocKind::kDevice;
    std::int32_t device = -1;
  };
  struct Space {
    std::unordered_map<std::uint64_t, Live> live;
    // Freed addresses (with the order number of their free), oldest first in `order`;
    // an entry of `order` whose number no longer matches was reallocated since.
    std::unordered_map<std::uint64_t, std::uint64_t> freed;
    std::deque<std::pair<std::uint64_t, std::uint64_t>> order;
  };
  struct Counters {
    std::uint64_t allocations = 0, allocated_bytes = 0, frees = 0, failed_allocations = 0, failed_frees = 0,
                  unknown_frees = 0, double_frees = 0, unreadable = 0, dropped = 0, live_allocations = 0,
                  live_bytes = 0, peak_bytes = 0;
    std::array<std::uint64_t, kSizeBuckets> histogram{};
    // Few functions allocate, and failures are rare: a short list.
    std::vector<FailedAllocations> failed_by_function;
  };
  struct Process {
    std::string comm;
    std::map<std::int32_t, Counters> devices;
    Space addresses;
    Space handles;
    std::unordered_map<std::uint32_t, std::int32_t> thread_device;
    std::uint64_t free_seq = 0;
    std::optional<std::chrono::steady_clock::time_point> gone_since;
  };

  const Role& role_of(const CallEvent& event);
  static Role resolve(const ProbeInfo& probe);
  Process* process(const CallEvent& event);
  void allocate(Process& p, const CallEvent& e, const Role& r);
  void release(Process& p, const CallEvent& e, const Role& r);
  void remember_freed(Process& p, Space& s, std::uint64_t addr);
  std::int32_t device_of(const Process& p, std::uint32_t tid) const;
  static MemoryLedgerRow row(std::uint32_t pid, const std::string& comm, std::int32_t device,
                             const Counters& c);

  Options options_;
  std::map<std::uint32_t, Process> processes_;
  std::deque<std::vector<MemoryLedgerRow>> exited_;  // one entry per exited process
  std::uint64_t exited_dropped_ = 0;
  std::uint64_t overflow_calls_ = 0;
  std::uint64_t leaks_total_ = 0;
  std::uint64_t leaked_bytes_total_ = 0;
  std::uint32_t sweep_cursor_ = 0;  // the pid the next sweep starts at
  // Probes are immutable and shared by their events: their address keys the role;
  // holding the shared_ptr keeps the address from being reused.
  std::unordered_map<const ProbeInfo*, Role> roles_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  const ProbeInfo* last_probe_ = nullptr;
  Role last_role_;
};

}  // namespace eacgm::analysis
