// Reads a process's environment block (/proc/<pid>/environ) and picks its launcher's
// rank variables out of it.
#include "sample/process_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

#include "core/unique_fd.h"

namespace eacgm::sample {
namespace {

std::optional<long> parse_count(std::string_view v) {
  long out = 0;
  if (v.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc{} || end != v.data() + v.size() || out < 0) return std::nullopt;
  return out;
}

}  // namespace

RankInfo parse_rank_env(std::string_view block) {
  // Index 0 is the preferred source of each field.
  constexpr std::array<std::string_view, 3> kRank = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"};
  constexpr std::array<std::string_view, 3> kLocal = {"LOCAL_RANK", "SLURM_LOCALID",
                                                      "OMPI_COMM_WORLD_LOCAL_RANK"};
  constexpr std::array<std::string_view, 3> kSize = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"};
  std::array<std::optional<long>, 3> rank, local, size;
  auto take = [](const auto& names, auto& slots, std::string_view key, std::string_view value) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (key == names[i]) slots[i] = parse_count(value);
    }
  };
  while (!block.empty()) {
    const auto nul = block.find('\0');
    const std::string_view entry = block.substr(0, nul);
    block = nul == std::string_view::npos ? std::string_view{} : block.substr(nul + 1);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = entry.substr(0, eq);
    const std::string_view value = entry.substr(eq + 1);
    take(kRank, rank, key, value);
    take(kLocal, local, key, value);
    take(kSize, size, key, value);
  }
  auto first = [](const auto& slots) -> std::optional<long> {
    for (const auto& s : slots) {
      if (s) return s;
    }
    return std::nullopt;
  };
  return RankInfo{first(rank), first(local), first(size)};
}

JobIds parse_job_env(std::string_view block) {
  JobIds ids;
  std::string torchrun;
  while (!block.empty()) {
    const auto nul = block.find('\0');
    const std::string_view entry = block.substr(0, nul);
    block = nul == std::string_view::npos ? std::string_view{} : block.substr(nul + 1);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = entry.substr(0, eq);
    const std::string_view value = entry.substr(eq + 1);
    if (key == "SLURM_JOB_ID") {
      ids.job = value;
    } else if (key == "SLURM_STEP_ID") {
      ids.step = value;
    } else if (key == "TORCHELASTIC_RUN_ID") {
      torchrun = value;
    } else if (key == "HOSTNAME") {
      ids.hostname = value;
    }
  }
  if (ids.job.empty()) {
    ids.step.clear();  // a step of no Slurm job means nothing
    // torchrun's default run id ("none") names no job.
    if (torchrun != "none") ids.job = torchrun;
  }
  return ids;
}

Result<std::string> read_environ(pid_t pid, std::size_t limit) {
  const std::string path = "/proc/" + std::to_string(pid) + "/environ";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const int err = errno;
    return make_errno_error(err, path + ": " + std::strerror(err));
  }
  std::string buf(limit, '\0');
  std::size_t used = 0;
  while (used < limit) {
    const ssize_t n = ::read(fd.get(), buf.data() + used, limit - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return make_errno_error(err, path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  fd.reset();
  buf.resize(used);
  // A cut-off last entry would be a wrong value ("RANK=1" of "RANK=12"): drop it.
  if (used == limit) {
    const auto nul = buf.rfind('\0');
    buf.resize(nul == std::string::npos ? 0 : nul);
  }
  return buf;
}

Result<RankInfo> read_rank_info(pid_t pid, std::size_t limit) {
  auto block = read_environ(pid, limit);
  if (!block) return std::move(block).take_error();
  return parse_rank_env(*block);
}

Result<ProcessEnv> read_process_env(pid_t pid, std::size_t limit) {
  auto block = read_environ(pid, limit);
  if (!block) return std::move(block).take_error();
  return ProcessEnv{parse_rank_env(*block), parse_job_env(*block)};
}

}  // namespace eacgm::sample
