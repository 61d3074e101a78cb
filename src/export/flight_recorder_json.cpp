// JSON of the NCCL flight recorder (export/flight_recorder_json.h).
#include "export/flight_recorder_json.h"

#include "core/nccl_types.h"
#include "export/flight_recorder_dump.h"
#include "export/python_stack_text.h"

namespace eacgm::exporting {
namespace {

using analysis::FlightEntry;
using analysis::FlightRank;
using analysis::NcclCollective;

json name_or_null(std::string_view name) { return name.empty() ? json(nullptr) : json(name); }

json entry_json(const FlightEntry& e, const FlightRank& r) {
  const bool rooted = e.kind == NcclCollective::kBroadcast || e.kind == NcclCollective::kReduce ||
                      e.kind == NcclCollective::kGather || e.kind == NcclCollective::kScatter;
  const bool p2p = e.kind == NcclCollective::kSend || e.kind == NcclCollective::kRecv;
  json out{
      {"record_id", e.record_id},
      {"collective_seq_id", e.collective_seq_id},
      {"p2p_seq_id", e.p2p_seq_id},
      {"instance", e.instance},
      {"name", "nccl" + std::string(analysis::nccl_collective_name(e.kind))},
      {"profiling_name", flight_profiling_name(e, r.rank)},
      {"count", e.has_count ? json(e.count) : json(nullptr)},
      {"datatype", e.datatype < 0 ? json(nullptr)
                                  : name_or_null(nccl_dtype_name(static_cast<std::uint64_t>(e.datatype)))},
      {"op",
       e.red_op < 0 ? json(nullptr) : name_or_null(nccl_red_op_name(static_cast<std::uint64_t>(e.red_op)))},
      {"root", rooted && e.peer >= 0 ? json(e.peer) : json(nullptr)},
      {"peer", p2p && e.peer >= 0 ? json(e.peer) : json(nullptr)},
      {"state", flight_state_name(e.state)},
      {"tid", e.tid},
      {"entered_ns", e.entered_ns},
      {"returned_ns", e.returned_ns == 0 ? json(nullptr) : json(e.returned_ns)},
      {"duration_ns", e.returned_ns == 0 ? json(nullptr) : json(e.returned_ns - e.entered_ns)},
      {"python_stack", e.python_stack ? json(python_stack_frames(*e.python_stack)) : json(nullptr)}};
  return out;
}

json rank_json(const FlightRank& r) {
  json entries = json::array();
  for (const auto& e : r.entries) entries.push_back(entry_json(e, r));
  return json{{"rank", r.rank},     {"pid", r.pid},           {"comm", r.comm},
              {"exited", r.exited}, {"recorded", r.recorded}, {"entries", std::move(entries)}};
}

}  // namespace

json flight_recorder_json(const analysis::FlightRecord& record, const FlightFilter& filter) {
  json comms = json::array();
  // The ranks come by communicator id, then rank: one object per run of a communicator.
  for (const FlightRank& r : record.ranks) {
    if (filter.comm_id && r.comm_id != *filter.comm_id) continue;
    if (filter.pid && r.pid != *filter.pid) continue;
    const std::string name = flight_comm_name(r.comm_id);
    if (comms.empty() || comms.back()["comm_id"] != name) {
      comms.push_back(json{{"comm_id", name}, {"nranks", r.nranks}, {"ranks", json::array()}});
    }
    comms.back()["ranks"].push_back(rank_json(r));
    if (r.nranks > 0) comms.back()["nranks"] = r.nranks;
  }
  return json{{"entries_per_rank", record.capacity},
              {"untracked_calls", record.untracked_calls},
              {"dropped_ranks", record.dropped_ranks},
              {"communicators", std::move(comms)}};
}

}  // namespace eacgm::exporting
