// The agent's end of the hooks' GPU-time rings with more than one agent on the node: a ring
// is read by one agent only (the names, spans and counts all reach the same one), one
// started for an agent is left to it while it lives, and a ring whose reader is gone or
// stopped is taken over. The rings are written here as the hook writes them.
#include "ingest/gpu_time_rings.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <new>
#include <string>

namespace eacgm::ingest {
namespace {

// A ring in a folder of its own, named after a live process (this one), as the hook makes it.
class Ring {
 public:
  explicit Ring(std::uint32_t reserved_reader = 0) {
    dir_ = (std::filesystem::temp_directory_path() / ("gpu_time_rings_test." + std::to_string(getpid())))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/" + gpu_time::kShmPrefix + std::to_string(getpid());
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(gpu_time::kFileBytes)), 0);
    base_ = mmap(nullptr, gpu_time::kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    EXPECT_NE(base_, MAP_FAILED);
    auto* h = new (base_) gpu_time::Header{};
    h->version = gpu_time::kVersion;
    h->slots = gpu_time::kSlots;
    h->pid = static_cast<std::uint32_t>(getpid());
    h->reserved_reader = reserved_reader;
    __atomic_store_n(&h->magic, gpu_time::kMagic, __ATOMIC_RELEASE);
  }
  ~Ring() {
    munmap(base_, gpu_time::kFileBytes);
    std::filesystem::remove_all(dir_);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  const std::string& dir() const { return dir_; }
  gpu_time::Header& header() { return *static_cast<gpu_time::Header*>(base_); }

  void put(const gpu_time::Record& r, const char* text = nullptr) {
    gpu_time::Record* slots = gpu_time::slots_of(base_);
    std::uint64_t head = header().head.load();
    slots[head++ % gpu_time::kSlots] = r;
    if (text != nullptr) {
      for (std::uint32_t i = 0; i < gpu_time::name_slots(r.length); ++i) {
        char* slot = reinterpret_cast<char*>(&slots[head++ % gpu_time::kSlots]);
        std::memset(slot, 0, gpu_time::kSlotBytes);
        std::strncpy(slot, text + static_cast<std::size_t>(i) * gpu_time::kSlotBytes, gpu_time::kSlotBytes);
      }
    }
    header().head.store(head);
  }
  void name(std::uint64_t function, const char* name) {
    gpu_time::Record r{};
    r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kName);
    r.function = function;
    r.length = static_cast<std::uint32_t>(std::strlen(name));
    put(r, name);
  }
  void span(std::uint64_t function, std::uint64_t duration_ns) {
    gpu_time::Record r{};
    r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kKernel);
    r.function = function;
    r.duration_ns = duration_ns;
    r.length = gpu_time::kSpanQueued;
    put(r);
  }

 private:
  std::string dir_, path_;
  void* base_ = nullptr;
};

// Two agents, both alive: this process and its parent stand for them.
const std::uint32_t kAgentA = static_cast<std::uint32_t>(getpid());
const std::uint32_t kAgentB = static_cast<std::uint32_t>(getppid());
// A pid no process has (past the kernel's pid_max).
constexpr std::uint32_t kGoneAgent = 0x7ffffff0;

TEST(GpuTimeRings, OneReaderTakesAllOfARingWhenTwoAgentsScan) {
  Ring ring;
  GpuTimeRings a(ring.dir(), {}, kAgentA);
  GpuTimeRings b(ring.dir(), {}, kAgentB);
  a.scan();
  b.scan();
  EXPECT_EQ(a.counters().rings, 1u);
  EXPECT_EQ(b.counters().rings, 0u) << "the second agent leaves it alone";
  EXPECT_EQ(b.counters().elsewhere, 1u);
  EXPECT_EQ(ring.header().reader.load(), kAgentA);
  // The hook writes names first, then spans; each agent drains in turn, as two would.
  ring.name(0x10, "kernelA(float*)");
  ring.span(0x10, 5000);
  GpuTimeBatch from_a, from_b;
  b.drain(from_b);
  a.drain(from_a);
  ring.span(0x10, 6000);
  b.drain(from_b);
  a.drain(from_a);
  ASSERT_EQ(from_a.names.size(), 1u);
  EXPECT_EQ(from_a.names[0].name, "kernelA(float*)");
  EXPECT_EQ(from_a.spans.size(), 2u);
  EXPECT_TRUE(from_b.names.empty());
  EXPECT_TRUE(from_b.spans.empty());
}

TEST(GpuTimeRings, ARingStartedForAnAgentIsLeftToIt) {
  Ring ring(kAgentB);
  GpuTimeRings a(ring.dir(), {}, kAgentA);
  a.scan();
  EXPECT_EQ(a.counters().rings, 0u) << "the process was started by another live agent";
  EXPECT_EQ(a.counters().elsewhere, 1u);
  EXPECT_EQ(ring.header().reader.load(), 0u);
  GpuTimeRings b(ring.dir(), {}, kAgentB);
  b.scan();
  EXPECT_EQ(b.counters().rings, 1u);
  EXPECT_EQ(ring.header().reader.load(), kAgentB);
}

TEST(GpuTimeRings, ARingOfAnAgentThatIsGoneIsTakenOver) {
  Ring ring(kGoneAgent);
  ring.header().reader.store(kGoneAgent);
  GpuTimeRings a(ring.dir(), {}, kAgentA);
  a.scan();
  EXPECT_EQ(a.counters().rings, 1u);
  EXPECT_EQ(ring.header().reader.load(), kAgentA);
}

TEST(GpuTimeRings, AStoppedReaderGivesItsRingsBack) {
  Ring ring;
  {
    GpuTimeRings a(ring.dir(), {}, kAgentA);
    a.scan();
    EXPECT_EQ(ring.header().reader.load(), kAgentA);
  }
  EXPECT_EQ(ring.header().reader.load(), 0u) << "the hook removes its file at exit when no agent reads it";
  GpuTimeRings b(ring.dir(), {}, kAgentB);
  b.scan();
  EXPECT_EQ(b.counters().rings, 1u);
  EXPECT_EQ(ring.header().reader.load(), kAgentB);
}

}  // namespace
}  // namespace eacgm::ingest
