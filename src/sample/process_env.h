// The distributed-training identity of a process (rank, local rank, world size), read
// from the variables its launcher set: torchrun/torch.distributed (RANK, LOCAL_RANK,
// WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS) and Open MPI
// (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE), in that order of preference.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
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

// Reads /proc/<pid>/environ (at most `limit` bytes). Fails when the process is gone or
// its environment cannot be read (another user's process without privileges).
Result<RankInfo> read_rank_info(pid_t pid, std::size_t limit = kEnvironReadLimit);

}  // namespace eacgm::sample
