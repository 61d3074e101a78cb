// The host-wait table of `eacgm run`.
#include "export/host_waits_table.h"

#include <fmt/format.h>

#include <vector>

#include "export/summary_table.h"
#include "export/text_columns.h"

namespace eacgm::exporting {

std::string render_host_waits(const analysis::HostWaitSummary& waits, std::size_t max_rows) {
  if (waits.rows.empty()) return {};
  std::string out =
      "\nhost waits (time blocked on the host, all threads of a process summed, so a share can pass "
      "100%; ~: estimated from sampled calls; docs/report.md)\n";
  std::vector<std::vector<std::string>> cells = {
      {"pid", "comm", "kind", "calls", "total", "share", "p50", "p99", ""}};
  const std::size_t n = std::min(waits.rows.size(), max_rows);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = waits.rows[i];
    const bool timed = r.timed > 0;
    cells.push_back({fmt::format("{}", r.pid), r.comm.empty() ? std::string("-") : r.comm,
                     std::string(host_wait_kind_name(r.kind)), fmt::format("{}", r.calls),
                     timed ? (r.estimated ? "~" : "") + format_duration(static_cast<double>(r.total_ns))
                           : std::string("-"),
                     timed && r.wall_ns > 0 ? fmt::format("{:.1f}%", 100.0 * r.share) : std::string("-"),
                     timed ? format_duration(r.p50_ns) : std::string("-"),
                     timed ? format_duration(r.p99_ns) : std::string("-"), r.exited ? "exited" : ""});
  }
  out += render_columns(cells, {true, false, false, true, true, true, true, true, false});
  if (waits.rows.size() > n)
    out += fmt::format("({} more rows not shown; all in --json)\n", waits.rows.size() - n);
  if (waits.untracked > 0) {
    out += fmt::format("({} waits of processes beyond the process cap not shown)\n", waits.untracked);
  }
  return out;
}

}  // namespace eacgm::exporting
