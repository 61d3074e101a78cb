// The NCCL flight recorder as JSON: `GET /api/v1/nccl/flight_recorder` (docs/api.md),
// per communicator and rank, the last calls oldest first.
#pragma once

#include <cstdint>
#include <optional>

#include "analysis/nccl_flight_recorder.h"
#include "export/json_opt.h"

namespace eacgm::exporting {

struct FlightFilter {
  std::optional<std::uint64_t> comm_id;
  std::optional<std::uint32_t> pid;
};

// {"entries_per_rank","untracked_calls","dropped_ranks","communicators":[{"comm_id","nranks",
//  "ranks":[{"rank","pid","comm","exited","recorded","entries":[{"record_id",
//  "collective_seq_id","p2p_seq_id","instance","name","profiling_name","count","datatype",
//  "op","peer","state","tid","entered_ns","returned_ns","duration_ns","python_stack"}]}]}]}
json flight_recorder_json(const analysis::FlightRecord& record, const FlightFilter& filter);

}  // namespace eacgm::exporting
