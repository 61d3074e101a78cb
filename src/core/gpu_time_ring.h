// The shared-memory ring through which libeacgm_hook.so hands the agent what it timed on
// the GPU (kernel and graph spans from CUDA event pairs) and what it counted exactly
// (launches per function; for a process on its own copy of the driver, the calls of every
// hooked driver function, the time spent in those that block the host, and each allocation
// and free with its address). One file per process, /dev/shm/eacgm-gpu-time.<pid>, created
// by the hook and removed at exit: by the hook when no agent reads it, else by the agent
// after its last read (or when it finds the process died without removing it).
//
// One producer (the hook's timing thread) and one consumer (the agent): the producer owns
// `head`, the consumer `tail`; both count 64-byte slots since the start and are masked by
// kSlots - 1. One consumer even when several agents run on the node (`eacgm serve` and an
// `eacgm run`): an agent claims the ring (`reader`) before it reads, and leaves alone a ring
// that another live agent holds or that was started for another live agent
// (`reserved_reader`); two readers would each take part of the records (the names of one,
// the spans of the other). A record is one slot; a name record is followed by its text in the next
// slots, a kernel span with kSpanShaped by its launch's shape (LaunchShape) in the next, a
// memory call by its MemoryPayload in the next.
// When the consumer is absent or slow the producer drops (counted in `dropped`): the hook
// never waits for the agent. Plain data only: this header is compiled into the hook (no
// exceptions, no allocation) and the agent alike.
#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>

namespace eacgm::gpu_time {

inline constexpr char kShmPrefix[] = "eacgm-gpu-time.";  // + the pid, under /dev/shm
inline constexpr std::uint32_t kMagic = 0x54475145;      // "EQGT"
// 2: kernel spans carry their shape; 3: kCalls, a private-driver process's calls; 4:
// kWaits, its host waits; 5: kMemory, its allocations and frees; 6: one reader, claimed
// by its pid (`reader`, `reserved_reader`).
inline constexpr std::uint32_t kVersion = 6;
inline constexpr std::uint32_t kSlots = 8192;  // a power of two
inline constexpr std::uint32_t kSlotBytes = 64;
inline constexpr std::uint32_t kMaxNameBytes = 4096;  // longer names are cut
// Set by an agent in the environment of a command it starts (`run`, `trace -- CMD`): its
// pid, which the hook writes into its ring's `reserved_reader`.
inline constexpr char kReaderEnv[] = "EACGM_GPU_TIME_READER";

enum class RecordKind : std::uint32_t {
  kKernel = 1,  // a sampled kernel launch: its span on the GPU
  kGraph = 2,   // a sampled graph launch, timed as one span
  kName = 3,    // the name of `function`; `length` bytes of text follow in the next slots
  kCount = 4,   // `count`: launches of `function` so far (cumulative, exact)
  // Calls of one hooked driver function so far (cumulative, exact), for a process on its
  // own copy of the driver: `duration_ns` the calls, `start_ns` the bytes (copies and
  // memsets); its name (`length` bytes, the exported symbol) in the next slots.
  kCalls = 5,
  // Calls of one hooked driver function that blocks the host (core/host_wait_kinds.h), for
  // a process on its own copy of the driver, that took a duration in one log bucket
  // (hookcore/wait_buckets.h `stream`) so far, cumulative: `duration_ns` the calls,
  // `start_ns` their time in ns, `launch_ns` the failed ones; its name as for kCalls.
  kWaits = 6,
  // One allocation or free by a process on its own copy of the driver, which no uprobe
  // sees: `launch_ns` when it was called (CLOCK_MONOTONIC), `duration_ns` its time on the
  // host, `tid` the calling thread, `function` its HookId; a MemoryPayload in the next slot.
  // Its count is not in the function's kCalls.
  kMemory = 7,
};

// A span's flags (in `length`).
inline constexpr std::uint32_t kSpanNccl = 1;
// The start event was still waiting behind earlier work on the stream when the launch had
// been queued, so the kernel followed it at once: the span is the kernel's. Without it the
// GPU reached the start event before the kernel arrived, and the span also holds that gap
// (the launch's latency): an upper bound.
inline constexpr std::uint32_t kSpanQueued = 2;
// The next slot holds the launch's grid and block (LaunchShape).
inline constexpr std::uint32_t kSpanShaped = 4;
// The function's first launch: it runs cold (the module loaded, caches empty), so the
// agent keeps it apart from the kernel's steady figures. An agent that predates the flag
// reads it as any other span.
inline constexpr std::uint32_t kSpanFirst = 8;

struct Record {
  std::uint32_t kind;         // RecordKind
  std::int32_t device;        // CUDA ordinal, -1 unknown
  std::uint64_t function;     // CUfunction or CUgraphExec
  std::uint64_t stream;       // CUstream as launched (0: the legacy stream)
  std::uint64_t launch_ns;    // kKernel/kGraph: CLOCK_MONOTONIC when the launch was issued
  std::uint64_t start_ns;     // kKernel/kGraph: when the GPU started it, CLOCK_MONOTONIC
  std::uint64_t duration_ns;  // kKernel/kGraph: GPU time; kCount: the launch count
  std::uint32_t tid;          // the launching thread
  std::uint32_t length;       // kName: bytes of text; kKernel/kGraph: kSpan* flags
  // kKernel/kGraph: host time from the start event's record to the launch call's return
  // (subtracted from a span that started on an idle stream).
  std::uint64_t host_launch_ns;
};
static_assert(sizeof(Record) == kSlotBytes);

// A kernel launch's geometry: one kernel launched with several shapes runs for different
// times, so its spans are told apart by it (and matched with a profiler's per launch).
struct LaunchShape {
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t shared_bytes;  // dynamic shared memory
  std::uint32_t reserved;
  bool operator==(const LaunchShape&) const = default;
  auto operator<=>(const LaunchShape&) const = default;
};
static_assert(sizeof(LaunchShape) <= kSlotBytes);

// A kMemory record's call.
inline constexpr std::uint32_t kMemoryByRuntime = 1;  // made by libcudart (its probe counts it)
inline constexpr std::size_t kMemoryNameBytes = 32;
struct MemoryPayload {
  std::uint64_t address;            // the allocated or freed address (cuMemCreate, cuMemRelease: the handle)
  std::uint64_t bytes;              // allocations: the size (cuMemAllocPitch_v2: the pitch)
  std::uint64_t rows;               // cuMemAllocPitch_v2: the height
  std::int32_t result;              // the CUresult
  std::uint32_t flags;              // kMemory*
  char function[kMemoryNameBytes];  // the exported symbol, NUL-padded
};
static_assert(sizeof(MemoryPayload) <= kSlotBytes);

struct alignas(64) Header {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t slots;
  std::uint32_t pid;                               // the process, as it sees itself
  std::uint64_t created_ns;                        // CLOCK_MONOTONIC
  alignas(64) std::atomic<std::uint64_t> head;     // written by the producer
  alignas(64) std::atomic<std::uint64_t> tail;     // written by the consumer
  alignas(64) std::atomic<std::uint64_t> dropped;  // records the producer could not write
  std::atomic<std::uint64_t> sampled;              // launches timed
  std::atomic<std::uint64_t> launches;             // launches seen
  std::atomic<std::uint64_t> skipped_capturing;    // launches not timed: a capture was underway
  std::atomic<std::uint64_t> timing_cost_ns;       // time the launching threads spent timing
  std::atomic<std::uint32_t> sample_every;         // the current 1-in-N
  std::atomic<std::uint32_t> errors;               // event calls that failed
  // The pid of the agent that reads the ring (0: none), claimed by compare-and-swap from 0
  // (or from an agent no longer alive) and given back when that agent stops first. While it
  // is set the hook leaves the file at exit for the agent to read last and remove.
  std::atomic<std::uint32_t> reader;
  // What the hook subtracts from each queued span: the event pair's dispatch gap measured
  // on the first context (0: not measured).
  std::atomic<std::uint64_t> dispatch_gap_ns;
  // Set (non-zero) by the agent or a benchmark to pause the timing: launches are still
  // counted exactly, none is timed. At a fixed offset for readers in other languages.
  std::atomic<std::uint32_t> paused;
  // Non-zero when the process runs its own copy of libcuda (the hook's
  // EACGM_PRIVATE_DRIVER): the driver's uprobes never reach it, and its launches are
  // counted here only. Written before the magic.
  std::uint32_t private_driver;
  // The pid of the agent that started the process ($EACGM_GPU_TIME_READER; 0: any): while
  // that agent lives, no other claims the ring. Written before the magic.
  std::uint32_t reserved_reader;
  // Launches timed behind a hold (the hook's stream_hold.h: an idle stream made to wait
  // until the kernel was queued), and the holds its watchdog had to release.
  std::atomic<std::uint64_t> held;
  std::atomic<std::uint64_t> holds_expired;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
inline constexpr std::size_t kPausedOffset = 256;
static_assert(offsetof(Header, paused) == kPausedOffset);

inline constexpr std::size_t kHeaderBytes = 4096;
static_assert(sizeof(Header) <= kHeaderBytes);
inline constexpr std::size_t kFileBytes = kHeaderBytes + std::size_t{kSlots} * kSlotBytes;

inline Record* slots_of(void* base) {
  return reinterpret_cast<Record*>(static_cast<unsigned char*>(base) + kHeaderBytes);
}
inline const Record* slots_of(const void* base) {
  return reinterpret_cast<const Record*>(static_cast<const unsigned char*>(base) + kHeaderBytes);
}

// Slots `length` bytes after a record take (a name's text, a span's shape).
inline constexpr std::uint32_t name_slots(std::uint32_t length) {
  return (length + kSlotBytes - 1) / kSlotBytes;
}

}  // namespace eacgm::gpu_time
