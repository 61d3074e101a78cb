// The NCCL flight recorder (analysis/nccl_flight_recorder.h) in the dump format of PyTorch's
// flight recorder, one pickle per rank, which its analyzer reads
// (`python -m torch.distributed.flight_recorder.fr_trace DIR`): the names and sizes it
// matches ranks' collectives by, shared with the API's JSON (export/flight_recorder_json.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/nccl_flight_recorder.h"

namespace eacgm::exporting {

// The analyzer finds a file's rank after this prefix (PyTorch's own default).
inline constexpr std::string_view kFlightDumpPrefix = "nccl_trace_rank_";
// The dump format's version the analyzer checks (major.minor, the same on every rank).
inline constexpr std::string_view kFlightDumpVersion = "2.10";

std::string_view flight_state_name(analysis::FlightState state);  // "started", "completed"
// "nccl:all_reduce", "nccl:send 0->1", "nccl:recv 1<-0" (PyTorch's profiling names).
std::string flight_profiling_name(const analysis::FlightEntry& e, std::int32_t rank);
// The tensors' shapes as the analyzer compares them across ranks: one flat tensor each,
// from the call's element count and the communicator's size.
struct FlightSizes {
  std::vector<std::int64_t> input;  // empty: count unknown
  std::vector<std::int64_t> output;
};
FlightSizes flight_sizes(const analysis::FlightEntry& e, std::int32_t nranks);
// PyTorch's name of the NCCL datatype ("Float", "BFloat16", ...; "Undefined" unknown).
std::string_view flight_torch_dtype(std::int64_t datatype);
// The communicator's name in the dump and the API: "0x" and 16 hex digits.
std::string flight_comm_name(std::uint64_t comm_id);

// One rank's dump: {"version","pg_config","pg_status","entries"} (see docs/nccl.md).
std::string flight_recorder_pickle(const analysis::FlightRank& rank);

}  // namespace eacgm::exporting
