// ProcFacts: rank labels from /proc/PID/environ (cached), the command line from
// /proc/PID/cmdline, the container from /proc/PID/cgroup, liveness from /proc/PID/stat.
#include "sample/process_facts.h"

#include <fmt/format.h>

#include <fstream>

#include "core/proc_stat.h"
#include "sample/container_id.h"

namespace eacgm::sample {

RankInfo ProcFacts::rank(std::uint32_t pid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ranks_.find(pid); it != ranks_.end()) return it->second;
  if (ranks_.size() >= kMaxCachedRanks) ranks_.clear();
  auto r = read_rank_info(static_cast<pid_t>(pid));
  return ranks_[pid] = r ? *r : RankInfo{};
}

std::string ProcFacts::cmdline(std::uint32_t pid) const {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::string s(4096, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(in.gcount()));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

std::optional<std::string> ProcFacts::container(std::uint32_t pid) const { return read_container_id(pid); }

bool ProcFacts::alive(std::uint32_t pid) const { return process_running(pid); }

}  // namespace eacgm::sample
