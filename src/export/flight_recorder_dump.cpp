// One rank's flight-recorder dump as PyTorch writes it (its keys and value types, read by
// torch/distributed/flight_recorder/components/{loader,builder,types}.py), pickled.
#include "export/flight_recorder_dump.h"

#include <fmt/format.h>

#include "core/nccl_types.h"
#include "export/pickle_writer.h"

namespace eacgm::exporting {
namespace {

using analysis::FlightEntry;
using analysis::FlightRank;
using analysis::FlightState;
using analysis::NcclCollective;

// PyTorch's names of the operations, by NcclCollective.
constexpr std::string_view kOpNames[] = {
    "",       "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast",
    "reduce", "gather",     "scatter",        "send",       "recv"};
static_assert(std::size(kOpNames) == analysis::kNcclCollectiveKinds);

void sizes(PickleWriter& w, const std::vector<std::int64_t>& shape) {
  w.begin_list().begin_list();
  for (auto d : shape) w.integer(d);
  w.end().end();
}

void dtypes(PickleWriter& w, std::int64_t datatype) {
  w.begin_list().str(flight_torch_dtype(datatype)).end();
}

void frames(PickleWriter& w, const FlightEntry& e) {
  w.begin_list();
  if (e.python_stack) {
    for (const auto& f : e.python_stack->frames) {
      if (!f.code || f.code->native) continue;  // the NCCL call itself
      w.begin_dict()
          .str("name")
          .str(f.code->function)
          .str("filename")
          .str(f.code->file)
          .str("line")
          .integer(f.line)
          .end();
    }
  }
  w.end();
}

void entry(PickleWriter& w, const FlightEntry& e, const FlightRank& r, const std::string& pg) {
  const bool p2p = !analysis::nccl_is_collective(e.kind);
  const bool completed = e.state == FlightState::kCompleted;
  const FlightSizes s = flight_sizes(e, r.nranks);
  w.begin_dict();
  w.str("record_id").integer(static_cast<std::int64_t>(e.record_id));
  w.str("pg_id").integer(0);
  w.str("process_group").begin_tuple().str(pg).str("undefined").end();
  w.str("collective_seq_id").integer(static_cast<std::int64_t>(e.collective_seq_id));
  w.str("p2p_seq_id").integer(static_cast<std::int64_t>(e.p2p_seq_id));
  w.str("op_id").integer(static_cast<std::int64_t>(e.record_id));
  w.str("profiling_name").str(flight_profiling_name(e, r.rank));
  w.str("time_created_ns").integer(static_cast<std::int64_t>(e.entered_ns));
  w.str("duration_ms").none();
  w.str("input_sizes");
  sizes(w, s.input);
  w.str("input_dtypes");
  dtypes(w, e.datatype);
  w.str("output_sizes");
  sizes(w, s.output);
  w.str("output_dtypes");
  dtypes(w, e.datatype);
  // Host-side: started at the call's entry, completed at its return.
  w.str("state").str(flight_state_name(e.state));
  w.str("time_discovered_started_ns").integer(static_cast<std::int64_t>(e.entered_ns));
  w.str("time_discovered_completed_ns");
  if (completed && e.returned_ns != 0) {
    w.integer(static_cast<std::int64_t>(e.returned_ns));
  } else {
    w.none();
  }
  w.str("retired").boolean(completed);
  w.str("timeout_ms").integer(0);
  w.str("is_p2p").boolean(p2p);
  w.str("thread_id").str(std::to_string(e.tid));
  w.str("thread_name").str(r.comm);
  w.str("frames");
  frames(w, e);
  w.end();
}

// "[0, 1, ...]": the ranks as Python writes a list (the analyzer evaluates the string).
std::string ranks_text(const FlightRank& r) {
  if (r.nranks <= 0) return fmt::format("[{}]", r.rank);
  std::string out = "[";
  for (std::int32_t i = 0; i < r.nranks; ++i) out += fmt::format("{}{}", i == 0 ? "" : ", ", i);
  return out + "]";
}

}  // namespace

std::string_view flight_state_name(FlightState state) {
  return state == FlightState::kStarted ? "started" : "completed";
}

std::string flight_profiling_name(const FlightEntry& e, std::int32_t rank) {
  const std::string_view op = kOpNames[static_cast<std::size_t>(e.kind)];
  if (e.kind == NcclCollective::kSend) return fmt::format("nccl:send {}->{}", rank, e.peer);
  if (e.kind == NcclCollective::kRecv) return fmt::format("nccl:recv {}<-{}", rank, e.peer);
  return fmt::format("nccl:{}", op);
}

FlightSizes flight_sizes(const FlightEntry& e, std::int32_t nranks) {
  FlightSizes s;
  if (!e.has_count) return s;
  const auto count = static_cast<std::int64_t>(e.count);
  const std::int64_t all = count * std::max<std::int32_t>(nranks, 1);
  // The count NCCL takes is per rank for these: the other side holds every rank's part.
  switch (e.kind) {
    case NcclCollective::kAllGather:
    case NcclCollective::kGather:
      s.input = {count};
      s.output = {all};
      break;
    case NcclCollective::kReduceScatter:
    case NcclCollective::kScatter:
      s.input = {all};
      s.output = {count};
      break;
    case NcclCollective::kAlltoAll:
      s.input = {all};
      s.output = {all};
      break;
    default:
      s.input = {count};
      s.output = {count};
  }
  return s;
}

std::string_view flight_torch_dtype(std::int64_t datatype) {
  // Indexed by ncclDataType_t (core/nccl_types.h): c10's ScalarType names.
  static constexpr std::string_view kNames[] = {"Char",   "Byte",     "Int",           "UInt32",
                                                "Long",   "UInt64",   "Half",          "Float",
                                                "Double", "BFloat16", "Float8_e4m3fn", "Float8_e5m2"};
  if (datatype < 0 || static_cast<std::size_t>(datatype) >= std::size(kNames)) return "Undefined";
  return kNames[datatype];
}

std::string flight_comm_name(std::uint64_t comm_id) { return fmt::format("0x{:016x}", comm_id); }

std::string flight_recorder_pickle(const FlightRank& r) {
  const std::string pg = flight_comm_name(r.comm_id);
  // The newest collective entered, started (in a call) and completed, by sequence id.
  std::int64_t enqueued = -1, started = -1, completed = -1;
  for (const auto& e : r.entries) {
    if (!analysis::nccl_is_collective(e.kind)) continue;
    const auto seq = static_cast<std::int64_t>(e.collective_seq_id);
    enqueued = std::max(enqueued, seq);
    started = std::max(started, seq);
    if (e.state == FlightState::kCompleted) completed = std::max(completed, seq);
  }
  PickleWriter w;
  w.begin_dict();
  w.str("version").str(kFlightDumpVersion);
  w.str("pg_config").begin_dict();
  w.str(pg)
      .begin_dict()
      .str("name")
      .str(pg)
      .str("desc")
      .str("undefined")
      .str("ranks")
      .str(ranks_text(r))
      .end();
  w.end();
  w.str("pg_status").begin_dict();
  w.str(pg).begin_dict();
  w.str("last_enqueued_collective").integer(enqueued);
  w.str("last_started_collective").integer(started);
  w.str("last_completed_collective").integer(completed);
  w.end().end();
  w.str("entries").begin_list();
  for (const auto& e : r.entries) entry(w, e, r, pg);
  w.end();
  // Where the dump came from: not read by the analyzer.
  w.str("eacgm").begin_dict();
  w.str("pid").integer(r.pid).str("comm").str(r.comm).str("exited").boolean(r.exited);
  w.str("recorded").integer(static_cast<std::int64_t>(r.recorded)).str("state_is_host_side").boolean(true);
  w.end();
  w.end();
  return w.finish();
}

}  // namespace eacgm::exporting
