#include "govern/hook/gpu_time_ring_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "govern/hook/private_driver.h"

namespace eacgm::govern::hook {
namespace {

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The agent that started the process, if one did: only it reads the ring while it lives.
std::uint32_t reader_from_env() {
  const char* v = std::getenv(gpu_time::kReaderEnv);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const unsigned long pid = std::strtoul(v, &end, 10);
  return *end == '\0' && pid <= 0x7fffffffUL ? static_cast<std::uint32_t>(pid) : 0;
}

}  // namespace

bool GpuTimeRingWriter::open() {
  std::snprintf(path_, sizeof path_, "/dev/shm/%s%d", gpu_time::kShmPrefix, static_cast<int>(getpid()));
  int fd = ::open(path_, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    path_[0] = '\0';
    return false;
  }
  void* base = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(gpu_time::kFileBytes)) == 0)
    base = mmap(nullptr, gpu_time::kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    unlink(path_);
    path_[0] = '\0';
    return false;
  }
  auto* h = new (base) gpu_time::Header{};
  h->version = gpu_time::kVersion;
  h->slots = gpu_time::kSlots;
  h->pid = static_cast<std::uint32_t>(getpid());
  h->created_ns = monotonic_ns();
  h->private_driver = private_driver_loaded() ? 1 : 0;
  h->reserved_reader = reader_from_env();
  // The magic last: a reader that sees it sees the rest.
  __atomic_store_n(&h->magic, gpu_time::kMagic, __ATOMIC_RELEASE);
  header_ = h;
  slots_ = gpu_time::slots_of(base);
  return true;
}

bool GpuTimeRingWriter::write(const gpu_time::Record& r, const char* text) {
  return write_with(r, text, text != nullptr ? r.length : 0);
}

bool GpuTimeRingWriter::write(const gpu_time::Record& r, const gpu_time::LaunchShape& shape) {
  return write_with(r, &shape, sizeof shape);
}

bool GpuTimeRingWriter::write(const gpu_time::Record& r, const gpu_time::MemoryPayload& payload) {
  return write_with(r, &payload, sizeof payload);
}

bool GpuTimeRingWriter::write_with(const gpu_time::Record& r, const void* payload, std::uint32_t bytes) {
  if (header_ == nullptr) return false;
  const std::uint32_t extra = gpu_time::name_slots(bytes);
  const std::uint64_t head = header_->head.load(std::memory_order_relaxed);
  const std::uint64_t tail = header_->tail.load(std::memory_order_acquire);
  if (head - tail + 1 + extra > gpu_time::kSlots) {
    header_->dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  constexpr std::uint64_t kMask = gpu_time::kSlots - 1;
  slots_[head & kMask] = r;
  const auto* from = static_cast<const char*>(payload);
  for (std::uint32_t i = 0; i < extra; ++i) {
    char* slot = reinterpret_cast<char*>(&slots_[(head + 1 + i) & kMask]);
    const std::uint32_t off = i * gpu_time::kSlotBytes;
    const std::uint32_t n = bytes - off < gpu_time::kSlotBytes ? bytes - off : gpu_time::kSlotBytes;
    std::memset(slot, 0, gpu_time::kSlotBytes);
    std::memcpy(slot, from + off, n);
  }
  header_->head.store(head + 1 + extra, std::memory_order_release);
  return true;
}

void GpuTimeRingWriter::remove() {
  if (path_[0] != '\0') unlink(path_);
  path_[0] = '\0';
}

void GpuTimeRingWriter::forget() {
  header_ = nullptr;
  slots_ = nullptr;
  path_[0] = '\0';
}

}  // namespace eacgm::govern::hook
