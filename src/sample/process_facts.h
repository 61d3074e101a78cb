// ProcessFacts: what the daemon says of a process beside its calls (its training rank,
// command line and container, and whether it still runs), as one interface its routes
// and metrics read. ProcFacts reads them from /proc; tests supply their own.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

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
};

// From /proc. A process's environment is read once for its rank (it does not change
// after exec, and HTTP threads would read it on every request); its command line is read
// at each ask while it runs (an exec changes it) and the last one kept for after its
// exit. Each cache holds at most kMaxCachedRanks pids and starts over when full.
class ProcFacts final : public ProcessFacts {
 public:
  static constexpr std::size_t kMaxCachedRanks = 4096;
  RankInfo rank(std::uint32_t pid) const override;
  std::string cmdline(std::uint32_t pid) const override;
  std::optional<std::string> container(std::uint32_t pid) const override;
  bool alive(std::uint32_t pid) const override;

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::uint32_t, RankInfo> ranks_;
  mutable std::map<std::uint32_t, std::string> cmdlines_;
};

}  // namespace eacgm::sample
