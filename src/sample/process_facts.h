// ProcessFacts: what the daemon says of a process beside its calls (its training rank,
// command line and container, and whether it still runs), as one interface its routes
// and metrics read. ProcFacts reads them from /proc; tests supply their own.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/pid_fifo.h"
#include "sample/cgroup_ids.h"
#include "sample/pod_directory.h"
#include "sample/process_env.h"
#include "sample/workload.h"

namespace eacgm::sample {

class ProcessFacts {
 public:
  virtual ~ProcessFacts() = default;
  // Rank labels; empty when the process set none (or is gone). Any thread.
  virtual RankInfo rank(std::uint32_t pid) const = 0;
  // The command line, arguments joined by spaces; once the process is gone, the last one
  // read while it ran ("" if none was).
  virtual std::string cmdline(std::uint32_t pid) const = 0;
  // The container id from the process's cgroup; nullopt outside a container.
  virtual std::optional<std::string> container(std::uint32_t pid) const = 0;
  // Its container, pod and job (sample/workload.h). By default the container id alone.
  virtual Workload workload(std::uint32_t pid) const {
    Workload w;
    w.container_id = container(pid).value_or("");
    return w;
  }
  // Running (not gone, not a zombie).
  virtual bool alive(std::uint32_t pid) const = 0;
  // Reads now what later asks need from /proc while the process still runs (its command
  // line, environment and cgroup), without asking anything slower (the kubelet). Called
  // at a process's first call, on the thread that reads the ring buffer.
  virtual void remember(std::uint32_t pid) const {
    (void)cmdline(pid);
    (void)rank(pid);
  }
};

// From /proc. A process's environment (rank, job) and cgroup ids are read once (they do
// not change after exec and the container's start, and HTTP threads would read them on
// every request); its command line is read at each ask while it runs (an exec changes
// it) and the last one kept for after its exit. The cached environment is checked
// against the process's start time at each ask: a pid that another process now has is
// read anew. Each cache holds at most kMaxCachedRanks pids; when full, the pid put longest
// ago goes first, unless its process still runs (core/pid_fifo.h). Pod and container
// names come from `pods` (the kubelet) at each ask, so a pod that is gone leaves no name
// behind.
class ProcFacts final : public ProcessFacts {
 public:
  static constexpr std::size_t kMaxCachedRanks = 4096;
  explicit ProcFacts(std::shared_ptr<PodDirectory> pods = nullptr, std::string proc_root = "/proc");
  RankInfo rank(std::uint32_t pid) const override;
  std::string cmdline(std::uint32_t pid) const override;
  std::optional<std::string> container(std::uint32_t pid) const override;
  Workload workload(std::uint32_t pid) const override;
  bool alive(std::uint32_t pid) const override;
  void remember(std::uint32_t pid) const override;

 private:
  struct Cached {
    ProcessEnv env;
    CgroupIds cgroup;
    std::uint64_t start_ticks = 0;  // when the process it was read from started (/proc/PID/stat)
  };
  Cached cached(std::uint32_t pid) const;

  std::shared_ptr<PodDirectory> pods_;
  std::string proc_root_;
  mutable std::mutex mutex_;
  mutable PidFifo<Cached> cached_{kMaxCachedRanks};
  mutable PidFifo<std::string> cmdlines_{kMaxCachedRanks};
};

}  // namespace eacgm::sample
