// ProcFacts: rank labels from /proc/PID/environ (cached), the command line from
// /proc/PID/cmdline, the container and pod from /proc/PID/cgroup, names from the
// kubelet (PodDirectory), liveness from /proc/PID/stat.
#include "sample/process_facts.h"

#include <fmt/format.h>

#include "core/proc_file.h"
#include "core/proc_stat.h"

namespace eacgm::sample {

ProcFacts::ProcFacts(std::shared_ptr<PodDirectory> pods, std::string proc_root)
    : pods_(std::move(pods)), proc_root_(std::move(proc_root)) {}

namespace {

// When the process with this pid started (clock ticks since boot); 0 when it is gone.
std::uint64_t start_of(std::uint32_t pid, const std::string& proc_root) {
  const auto stat = read_proc_stat(pid, proc_root);
  return stat ? stat->start_ticks : 0;
}

}  // namespace

ProcFacts::Cached ProcFacts::cached(std::uint32_t pid) const {
  const std::uint64_t start = start_of(pid, proc_root_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const Cached* kept = cached_.find(pid)) {
      // Kept for a process that is gone; another process with the same pid is asked anew.
      if (start == 0 || kept->start_ticks == start) return *kept;
      cached_.erase(pid);
    }
  }
  Cached c;
  c.start_ticks = start;
  auto env = read_process_env(static_cast<pid_t>(pid));
  if (env) c.env = std::move(*env);
  c.cgroup = read_cgroup_ids(pid, proc_root_);
  // Cached only once its environment was read: a process gone (its pid may be reused) or
  // not readable yet is asked again next time rather than kept without its rank.
  if (!env || start == 0) return c;
  std::lock_guard<std::mutex> lock(mutex_);
  // The oldest is spared while its process runs.
  return cached_.put(pid, std::move(c), [this](std::uint32_t p, const Cached& e) {
    return start_of(p, proc_root_) == e.start_ticks;
  });
}

RankInfo ProcFacts::rank(std::uint32_t pid) const { return cached(pid).env.rank; }

namespace {

// The string holds what was read, no more: callers keep it for every process they list.
std::string read_cmdline(std::uint32_t pid) {
  std::string s = read_small_file(fmt::format("/proc/{}/cmdline", pid), 4096).value_or("");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

}  // namespace

std::string ProcFacts::cmdline(std::uint32_t pid) const {
  std::string now = read_cmdline(pid);  // "" when gone (and for a kernel thread)
  std::lock_guard<std::mutex> lock(mutex_);
  if (!now.empty()) {
    // The oldest is spared while a process has its pid (one that another process has now is
    // written over at that one's next ask).
    cmdlines_.put(pid, now,
                  [this](std::uint32_t p, const std::string&) { return start_of(p, proc_root_) != 0; });
    return now;
  }
  if (const std::string* kept = cmdlines_.find(pid)) return *kept;
  return now;
}

std::optional<std::string> ProcFacts::container(std::uint32_t pid) const {
  std::string id = cached(pid).cgroup.container_id;
  if (id.empty()) return std::nullopt;
  return id;
}

Workload ProcFacts::workload(std::uint32_t pid) const {
  const Cached c = cached(pid);
  Workload w;
  w.container_id = c.cgroup.container_id;
  w.pod_uid = c.cgroup.pod_uid;
  w.job = c.env.job.job;
  w.job_step = c.env.job.step;
  if (pods_) pods_->name(w, c.env.job.hostname);
  return w;
}

void ProcFacts::remember(std::uint32_t pid) const {
  (void)cmdline(pid);
  (void)cached(pid);  // environment and cgroup ids; pods are named when asked
}

bool ProcFacts::alive(std::uint32_t pid) const { return process_alive(pid); }

}  // namespace eacgm::sample
