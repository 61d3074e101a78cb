// The SQL of nccl_standings (schema.h, versions 9 and 12), the same in both stores: a node's rows
// replaced, the rows of a job's communicators read back, and the rows of agents that
// stopped writing deleted.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/job_verdict.h"
#include "analysis/nccl_bandwidth.h"
#include "history/window_sql.h"

namespace eacgm::history {

// A rank's kept starts as the arrivals column holds them, each moved by `offset_ns` (the
// store's clock minus the node's), and back; a malformed item is left out.
std::string encode_arrivals(std::span<const analysis::NcclArrival> arrivals, std::int64_t offset_ns);
std::vector<analysis::NcclArrival> decode_arrivals(std::string_view text);

// One rank's row of `node_id` written at `written_ns` (the row's own time is not read),
// inserted or written over the one there; its starts moved onto the store's clock by
// `offset_ns`, whose bound is `uncertainty_ns` (-1: not measured).
QuerySql put_standing_sql(Dialect d, std::int64_t node_id, const analysis::RankReport& r,
                          std::int64_t written_ns, std::int64_t offset_ns, std::int64_t uncertainty_ns);
// The node's rows that the write at `written_ns` did not write: ranks gone.
QuerySql drop_unwritten_standings_sql(Dialect d, std::int64_t node_id, std::int64_t written_ns);
// Every node's rows of the communicators `comm_ids` (all when empty) written at
// `since_ns` or later, at most `limit`, the newest first; get_standing reads each.
QuerySql read_standings_sql(Dialect d, std::span<const std::uint64_t> comm_ids, std::int64_t since_ns,
                            std::size_t limit);
// The rows written before `before_ns` (maintain()).
QuerySql expire_standings_sql(Dialect d, std::int64_t before_ns);

template <class In>
analysis::RankReport get_standing(const In& in) {
  analysis::RankReport r;
  r.node = in.text(0);
  r.comm_id = static_cast<std::uint64_t>(in.i64(1));
  r.standing.rank = static_cast<std::int32_t>(in.i64(2));
  r.standing.pid = static_cast<std::uint32_t>(in.i64(3));
  r.nranks = static_cast<std::int32_t>(in.i64(4));
  r.standing.entered = static_cast<std::uint64_t>(in.i64(5));
  r.standing.finished = static_cast<std::uint64_t>(in.i64(6));
  r.standing.waiting_ns = static_cast<std::uint64_t>(in.i64(7));
  r.standing.last = analysis::nccl_collective_of(in.text(8));
  r.written_ns = in.i64(9);
  r.standing.arrivals = decode_arrivals(in.text(10));
  r.clock_uncertainty_ns = in.i64(11);
  return r;
}

}  // namespace eacgm::history
