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

namespace {

std::string read_cmdline(std::uint32_t pid) {
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

}  // namespace

std::string ProcFacts::cmdline(std::uint32_t pid) const {
  std::string now = read_cmdline(pid);  // "" when gone (and for a kernel thread)
  std::lock_guard<std::mutex> lock(mutex_);
  if (!now.empty()) {
    if (cmdlines_.size() >= kMaxCachedRanks && !cmdlines_.contains(pid)) cmdlines_.clear();
    cmdlines_[pid] = now;
    return now;
  }
  if (auto it = cmdlines_.find(pid); it != cmdlines_.end()) return it->second;
  return now;
}

std::optional<std::string> ProcFacts::container(std::uint32_t pid) const { return read_container_id(pid); }

bool ProcFacts::alive(std::uint32_t pid) const { return process_running(pid); }

}  // namespace eacgm::sample
