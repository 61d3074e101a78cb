// The SQL of nccl_standings (history/standings_sql.h).
#include "history/standings_sql.h"

#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <variant>

#include "analysis/nccl_bandwidth.h"

namespace eacgm::history {

std::string encode_arrivals(std::span<const analysis::NcclArrival> arrivals, std::int64_t offset_ns) {
  std::string out;
  for (const analysis::NcclArrival& a : arrivals) {
    out += fmt::format("{}{}:{}:{}", out.empty() ? "" : " ", static_cast<int>(a.kind), a.seq,
                       static_cast<std::int64_t>(a.ts_ns) + offset_ns);
  }
  return out;
}

std::vector<analysis::NcclArrival> decode_arrivals(std::string_view text) {
  std::vector<analysis::NcclArrival> out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find(' '), text.size());
    const std::string_view item = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    unsigned kind = 0;
    std::uint64_t seq = 0;
    std::int64_t ts = 0;
    // A malformed item (a store edited by hand) is left out.
    if (std::sscanf(std::string(item).c_str(), "%u:%" SCNu64 ":%" SCNd64, &kind, &seq, &ts) != 3) continue;
    if (kind >= analysis::kNcclCollectiveKinds || ts <= 0) continue;
    out.push_back({static_cast<analysis::NcclCollective>(kind), seq, static_cast<std::uint64_t>(ts)});
  }
  return out;
}

QuerySql put_standing_sql(Dialect d, std::int64_t node_id, const analysis::RankReport& r,
                          std::int64_t written_ns, std::int64_t offset_ns, std::int64_t uncertainty_ns) {
  QuerySql s(d);
  const std::string collective = analysis::nccl_is_collective(r.standing.last)
                                     ? fmt::format("nccl{}", analysis::nccl_collective_name(r.standing.last))
                                     : std::string();
  // One after another: each argument's place is its turn.
  std::string values;
  for (QuerySql::Arg a :
       {QuerySql::Arg(node_id), QuerySql::Arg(static_cast<std::int64_t>(r.comm_id)),
        QuerySql::Arg(std::int64_t{r.standing.rank}), QuerySql::Arg(std::int64_t{r.standing.pid}),
        QuerySql::Arg(std::int64_t{r.nranks}), QuerySql::Arg(static_cast<std::int64_t>(r.standing.entered)),
        QuerySql::Arg(static_cast<std::int64_t>(r.standing.finished)),
        QuerySql::Arg(static_cast<std::int64_t>(r.standing.waiting_ns)), QuerySql::Arg(collective),
        QuerySql::Arg(written_ns), QuerySql::Arg(encode_arrivals(r.standing.arrivals, offset_ns)),
        QuerySql::Arg(uncertainty_ns)}) {
    values +=
        (values.empty() ? "" : ", ") + std::visit([&s](auto v) { return s.arg(std::move(v)); }, std::move(a));
  }
  s.text = fmt::format(
      "INSERT INTO nccl_standings(node, comm_id, rank, pid, nranks, entered, finished, waiting_ns, "
      "collective, "
      "written_ns, arrivals, clock_uncertainty_ns) VALUES({}) ON CONFLICT(node, comm_id, rank) DO UPDATE SET "
      "pid = excluded.pid, nranks = excluded.nranks, entered = excluded.entered, finished = "
      "excluded.finished, "
      "waiting_ns = excluded.waiting_ns, collective = excluded.collective, written_ns = excluded.written_ns, "
      "arrivals = excluded.arrivals, clock_uncertainty_ns = excluded.clock_uncertainty_ns",
      values);
  return s;
}

QuerySql drop_unwritten_standings_sql(Dialect d, std::int64_t node_id, std::int64_t written_ns) {
  QuerySql s(d);
  const std::string node = s.arg(node_id);
  const std::string written = s.arg(written_ns);
  s.text = fmt::format("DELETE FROM nccl_standings WHERE node = {} AND written_ns <> {}", node, written);
  return s;
}

QuerySql read_standings_sql(Dialect d, std::span<const std::uint64_t> comm_ids, std::int64_t since_ns,
                            std::size_t limit) {
  QuerySql s(d);
  s.text = fmt::format(
      "SELECT n.name, s.comm_id, s.rank, s.pid, s.nranks, s.entered, s.finished, s.waiting_ns, s.collective, "
      "s.written_ns, s.arrivals, s.clock_uncertainty_ns FROM nccl_standings s JOIN names n ON n.id = s.node "
      "WHERE s.written_ns >= {}",
      s.arg(since_ns));
  if (!comm_ids.empty()) {
    // Integers written into the text: the same in both dialects, and no array to bind.
    std::string ids;
    for (std::uint64_t id : comm_ids)
      ids += fmt::format("{}{}", ids.empty() ? "" : ", ", static_cast<std::int64_t>(id));
    s.text += fmt::format(" AND s.comm_id IN ({})", ids);
  }
  s.text += fmt::format(" ORDER BY s.written_ns DESC LIMIT {}", limit);
  return s;
}

QuerySql expire_standings_sql(Dialect d, std::int64_t before_ns) {
  QuerySql s(d);
  s.text = fmt::format("DELETE FROM nccl_standings WHERE written_ns < {}", s.arg(before_ns));
  return s;
}

}  // namespace eacgm::history
