// [nccl]: what the agent keeps of the NCCL calls beyond their statistics: the flight
// recorder's entries per communicator and rank.
#pragma once

#include <cstdint>

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::agent {

struct NcclConfig {
  // The last collectives kept per communicator and rank (GET /api/v1/nccl/flight_recorder,
  // `eacgm flight-recorder`), 1 to 4096.
  std::uint32_t flight_recorder_entries = 64;
};

// Adds [nccl] to the file's sections, read into `nccl`.
void add_nccl_section(ConfigSections& sections, NcclConfig& nccl);

}  // namespace eacgm::agent
