#include "ingest/gpu_time_rings.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "core/proc_file.h"
#include "core/proc_stat.h"
#include "core/unique_fd.h"
#include "probe/library_match.h"

namespace eacgm::ingest {
namespace {

// The `length` bytes of text in the slots from `tail` (cut at kMaxNameBytes and at a NUL),
// `tail` moved past them; false, and the rest of the read skipped, when they were never
// written.
bool read_text(const gpu_time::Record* slots, std::uint64_t head, std::uint64_t& tail, std::uint32_t length,
               std::string& out) {
  constexpr std::uint64_t kMask = gpu_time::kSlots - 1;
  length = length > gpu_time::kMaxNameBytes ? gpu_time::kMaxNameBytes : length;
  const std::uint32_t n = gpu_time::name_slots(length);
  if (head - tail < n) {
    tail = head;
    return false;
  }
  out.reserve(length);
  for (std::uint32_t i = 0; i < n; ++i) {
    const char* text = reinterpret_cast<const char*>(&slots[(tail + i) & kMask]);
    const std::uint32_t left = length - i * gpu_time::kSlotBytes;
    out.append(text, left < gpu_time::kSlotBytes ? left : gpu_time::kSlotBytes);
  }
  tail += n;
  if (auto nul = out.find('\0'); nul != std::string::npos) out.resize(nul);
  return true;
}

}  // namespace

GpuTimeRings::GpuTimeRings(std::string dir, std::function<bool(std::uint32_t)> wanted, std::uint32_t self)
    : dir_(std::move(dir)),
      wanted_(std::move(wanted)),
      self_(self != 0 ? self : static_cast<std::uint32_t>(getpid())) {}

GpuTimeRings::~GpuTimeRings() {
  // The processes still running keep their rings: another agent may take them over, and
  // with none the hook removes its file at exit.
  for (auto& [pid, m] : rings_) {
    if (m.base == nullptr) continue;
    std::uint32_t mine = self_;
    static_cast<gpu_time::Header*>(m.base)->reader.compare_exchange_strong(mine, 0,
                                                                           std::memory_order_acq_rel);
    release(m, false);
  }
}

bool GpuTimeRings::claim(gpu_time::Header& h) const {
  const std::uint32_t reserved = h.reserved_reader;
  if (reserved != 0 && reserved != self_ && process_exists(reserved)) return false;
  std::uint32_t reader = h.reader.load(std::memory_order_acquire);
  for (;;) {
    if (reader == self_) return true;
    if (reader != 0 && process_exists(reader)) return false;
    // Free, or held by an agent that is gone (what it read is lost; the rest is ours).
    if (h.reader.compare_exchange_weak(reader, self_, std::memory_order_acq_rel)) return true;
  }
}

void GpuTimeRings::release(Mapped& m, bool remove_file) {
  if (m.base != nullptr) munmap(m.base, gpu_time::kFileBytes);
  m.base = nullptr;
  if (remove_file) unlink(m.path.c_str());
}

void GpuTimeRings::scan() {
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return;
  counters_.elsewhere = 0;
  const std::size_t prefix = std::strlen(gpu_time::kShmPrefix);
  while (dirent* e = readdir(d)) {
    const std::string_view name(e->d_name);
    if (name.size() <= prefix || name.substr(0, prefix) != gpu_time::kShmPrefix) continue;
    std::uint32_t pid = 0;
    const auto digits = name.substr(prefix);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (ec != std::errc() || end != digits.data() + digits.size() || pid == 0) continue;
    if (rings_.contains(pid)) continue;
    const std::string path = dir_ + "/" + std::string(name);
    if (!process_exists(pid)) {
      unlink(path.c_str());  // left by a process that died without removing it
      continue;
    }
    if (wanted_ && !wanted_(pid)) continue;
    UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    struct stat st {};
    if (!fd.valid() || fstat(fd.get(), &st) != 0 || st.st_size != static_cast<off_t>(gpu_time::kFileBytes)) {
      ++counters_.refused;
      continue;
    }
    void* base = mmap(nullptr, gpu_time::kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (base == MAP_FAILED) {
      ++counters_.refused;
      continue;
    }
    const auto* h = static_cast<const gpu_time::Header*>(base);
    if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != gpu_time::kMagic ||
        h->version != gpu_time::kVersion || h->slots != gpu_time::kSlots) {
      munmap(base, gpu_time::kFileBytes);
      ++counters_.refused;
      continue;
    }
    if (!claim(*static_cast<gpu_time::Header*>(base))) {
      munmap(base, gpu_time::kFileBytes);
      ++counters_.elsewhere;
      continue;
    }
    rings_[pid] = Mapped{base, path, read_proc_comm(pid)};
    ++counters_.opened;
  }
  closedir(d);
  counters_.rings = rings_.size();
}

void GpuTimeRings::read_ring(std::uint32_t pid, Mapped& m, bool exited, GpuTimeBatch& out) {
  auto* h = static_cast<gpu_time::Header*>(m.base);
  const gpu_time::Record* slots = gpu_time::slots_of(m.base);
  constexpr std::uint64_t kMask = gpu_time::kSlots - 1;
  std::uint64_t tail = h->tail.load(std::memory_order_relaxed);
  const std::uint64_t head = h->head.load(std::memory_order_acquire);
  if (head - tail > gpu_time::kSlots) tail = head;  // a corrupt ring: skip what it claims
  while (tail < head) {
    const gpu_time::Record r = slots[tail & kMask];
    ++tail;
    switch (static_cast<gpu_time::RecordKind>(r.kind)) {
      case gpu_time::RecordKind::kKernel:
      case gpu_time::RecordKind::kGraph: {
        GpuSpan s;
        s.pid = pid;
        s.tid = r.tid;
        s.device = r.device;
        s.function = r.function;
        s.stream = r.stream;
        s.launch_ns = r.launch_ns;
        s.start_ns = r.start_ns;
        s.duration_ns = r.duration_ns;
        s.graph = r.kind == static_cast<std::uint32_t>(gpu_time::RecordKind::kGraph);
        s.nccl = (r.length & gpu_time::kSpanNccl) != 0;
        s.queued = (r.length & gpu_time::kSpanQueued) != 0;
        s.first = (r.length & gpu_time::kSpanFirst) != 0;
        if ((r.length & gpu_time::kSpanShaped) != 0) {
          if (tail == head) break;  // a shape never written: the span is dropped
          std::memcpy(&s.shape, &slots[tail & kMask], sizeof s.shape);
          s.shaped = true;
          ++tail;
        }
        out.spans.push_back(s);
        break;
      }
      case gpu_time::RecordKind::kName: {
        GpuFunctionName f;
        if (!read_text(slots, head, tail, r.length, f.name)) break;
        f.pid = pid;
        f.function = r.function;
        f.nccl = r.duration_ns != 0;
        f.name = probe::demangle(f.name);
        out.names.push_back(std::move(f));
        break;
      }
      case gpu_time::RecordKind::kCount:
        out.counts.push_back(GpuLaunchCount{pid, r.function, r.duration_ns, r.length != 0});
        break;
      case gpu_time::RecordKind::kCalls: {
        GpuCallCount c;
        if (!read_text(slots, head, tail, r.length, c.function)) break;
        c.pid = pid;
        c.calls = r.duration_ns;
        c.bytes = r.start_ns;
        out.calls.push_back(std::move(c));
        break;
      }
      case gpu_time::RecordKind::kWaits: {
        GpuWaitTimes w;
        if (!read_text(slots, head, tail, r.length, w.function)) break;
        w.pid = pid;
        w.bucket = static_cast<std::uint32_t>(r.stream);
        w.calls = r.duration_ns;
        w.ns = r.start_ns;
        w.failed = r.launch_ns;
        out.waits.push_back(std::move(w));
        break;
      }
      case gpu_time::RecordKind::kMemory: {
        if (tail == head) break;  // a payload never written: the call is dropped
        gpu_time::MemoryPayload p{};
        std::memcpy(&p, &slots[tail & kMask], sizeof p);
        ++tail;
        GpuMemoryCall c;
        c.pid = pid;
        c.tid = r.tid;
        c.function.assign(p.function, ::strnlen(p.function, sizeof p.function));
        c.begin_ns = r.launch_ns;
        c.duration_ns = r.duration_ns;
        c.address = p.address;
        c.bytes = p.bytes;
        c.rows = p.rows;
        c.result = p.result;
        c.by_runtime = (p.flags & gpu_time::kMemoryByRuntime) != 0;
        out.memory.push_back(std::move(c));
        break;
      }
      default:
        ++counters_.malformed;
        tail = head;
        break;
    }
  }
  h->tail.store(tail, std::memory_order_release);
  GpuRingState st;
  st.pid = pid;
  st.comm = m.comm;
  st.launches = h->launches.load(std::memory_order_relaxed);
  st.sampled = h->sampled.load(std::memory_order_relaxed);
  st.dropped = h->dropped.load(std::memory_order_relaxed);
  st.skipped_capturing = h->skipped_capturing.load(std::memory_order_relaxed);
  st.timing_cost_ns = h->timing_cost_ns.load(std::memory_order_relaxed);
  st.sample_every = h->sample_every.load(std::memory_order_relaxed);
  st.errors = h->errors.load(std::memory_order_relaxed);
  st.dispatch_gap_ns = h->dispatch_gap_ns.load(std::memory_order_relaxed);
  st.held = h->held.load(std::memory_order_relaxed);
  st.holds_expired = h->holds_expired.load(std::memory_order_relaxed);
  st.exited = exited;
  st.private_driver = h->private_driver != 0;
  out.rings.push_back(st);
}

void GpuTimeRings::drain(GpuTimeBatch& out) {
  for (auto it = rings_.begin(); it != rings_.end();) {
    const bool alive = process_exists(it->first);  // before the read: nothing comes after it
    read_ring(it->first, it->second, !alive, out);
    if (alive) {
      ++it;
      continue;
    }
    release(it->second, true);
    it = rings_.erase(it);
  }
  counters_.rings = rings_.size();
}

}  // namespace eacgm::ingest
