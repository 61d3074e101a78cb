// The agent's end of the hooks' GPU-time rings (core/gpu_time_ring.h): finds the rings of
// processes carrying libeacgm_hook.so with GPU time on (/dev/shm/eacgm-gpu-time.<pid>),
// maps each once, and drains what they hold into GpuTimeBatch, decoding names, spans and
// exact launch counts. A ring whose process is gone is drained a last time, unmapped, and
// its file removed (the hook removes it itself at a normal exit).
//
// One reader per ring (core/gpu_time_ring.h): a ring is read only once claimed under this
// agent's pid; one that another live agent holds, or that was started for another live
// agent, is left to it (`elsewhere`) and looked at again each scan, so that it is taken
// over when that agent is gone. Claims are given back when the reader is destroyed.
//
// The file's pid is the process as it sees itself: rings of processes in another pid
// namespace, or with a private /dev/shm (a container without the host's IPC namespace),
// are not found.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/gpu_span.h"
#include "core/gpu_time_ring.h"

namespace eacgm::ingest {

struct GpuTimeRingCounters {
  std::uint64_t rings = 0;      // mapped now
  std::uint64_t opened = 0;     // ever
  std::uint64_t refused = 0;    // files that were not a ring of this version
  std::uint64_t elsewhere = 0;  // rings of live processes that another live agent reads (now)
  std::uint64_t malformed = 0;  // records of an unknown kind (the rest of that read skipped)
};

class GpuTimeRings {
 public:
  // `wanted(pid)`: whether to read this process's ring (`run` reads only its own). `self`:
  // the pid rings are claimed under (0: this process's).
  explicit GpuTimeRings(std::string dir = "/dev/shm", std::function<bool(std::uint32_t)> wanted = {},
                        std::uint32_t self = 0);
  ~GpuTimeRings();
  GpuTimeRings(const GpuTimeRings&) = delete;
  GpuTimeRings& operator=(const GpuTimeRings&) = delete;

  // Looks for new rings (and removes those whose process died without removing them).
  void scan();
  // Everything the mapped rings hold, appended to `out`; rings of exited processes are
  // released after their last read.
  void drain(GpuTimeBatch& out);
  const GpuTimeRingCounters& counters() const { return counters_; }

 private:
  struct Mapped {
    void* base = nullptr;
    std::string path;
    std::string comm;
  };
  void read_ring(std::uint32_t pid, Mapped& m, bool exited, GpuTimeBatch& out);
  void release(Mapped& m, bool remove_file);
  // Whether this agent may read the mapped ring, claiming it if so.
  bool claim(gpu_time::Header& h) const;

  std::string dir_;
  std::function<bool(std::uint32_t)> wanted_;
  std::uint32_t self_;
  std::map<std::uint32_t, Mapped> rings_;
  GpuTimeRingCounters counters_;
};

}  // namespace eacgm::ingest
