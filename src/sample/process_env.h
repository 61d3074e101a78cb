// The distributed-training identity of a process (rank, local rank, world size), read
// from the variables its launcher set: torchrun/torch.distributed (RANK, LOCAL_RANK,
// WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS) and Open MPI
// (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE), in that order of preference.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace eacgm::sample {

struct RankInfo {
  std::optional<long> rank;
  std::optional<long> local_rank;
  std::optional<long> world_size;

  bool empty() const { return !rank && !local_rank && !world_size; }
  bool operator==(const RankInfo&) const = default;
};

// At most this much of /proc/<pid>/environ is read; a variable past it is not seen.
inline constexpr std::size_t kEnvironReadLimit = std::size_t{256} << 10;

// Parses a NUL-separated environment block (the content of /proc/<pid>/environ). A
// value that is not a non-negative decimal integer is ignored.
RankInfo parse_rank_env(std::string_view environ_block);

// The batch job a process belongs to: Slurm's (SLURM_JOB_ID, SLURM_STEP_ID), else
// torchrun's (TORCHELASTIC_RUN_ID); and HOSTNAME, which in a Kubernetes pod is the pod's
// name (a way to name a pod when the kubelet's logs do not).
struct JobIds {
  std::string job;
  std::string step;
  std::string hostname;
  bool operator==(const JobIds&) const = default;
};
JobIds parse_job_env(std::string_view environ_block);

// What the agent reads of a process's environment, in one read.
struct ProcessEnv {
  RankInfo rank;
  JobIds job;
};

// Reads /proc/<pid>/environ (at most `limit` bytes; a cut-off last entry is dropped).
// Fails when the process is gone or its environment cannot be read (another user's
// process without privileges).
Result<std::string> read_environ(pid_t pid, std::size_t limit = kEnvironReadLimit);
Result<RankInfo> read_rank_info(pid_t pid, std::size_t limit = kEnvironReadLimit);
Result<ProcessEnv> read_process_env(pid_t pid, std::size_t limit = kEnvironReadLimit);

}  // namespace eacgm::sample
