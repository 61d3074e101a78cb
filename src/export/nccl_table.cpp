// NCCL tables for `eacgm run`.
#include "export/nccl_table.h"

#include <fmt/format.h>

#include <vector>

#include "export/memory_table.h"
#include "export/summary_table.h"
#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

std::string comm_cell(std::uint64_t comm_id) {
  return comm_id == 0 ? std::string("unknown") : fmt::format("0x{:016x}", comm_id);
}

std::string rank_cell(std::int32_t v) { return v < 0 ? std::string("-") : fmt::format("{}", v); }

std::string render_skew(const analysis::NcclSkewSummary& skew) {
  if (skew.comms.empty()) return {};
  std::string out =
      "\nnccl arrival skew (per collective instance: latest minus earliest host-side start among this "
      "node's ranks)\n";
  std::vector<std::vector<std::string>> cells = {
      {"comm", "ranks here", "instances", "incomplete", "skew p50", "p99", "max", "straggler"}};
  std::string details;
  for (const auto& c : skew.comms) {
    const bool any = c.instances > 0;
    auto dur = [any](double ns) { return any ? format_duration(ns) : std::string("-"); };
    cells.push_back(
        {comm_cell(c.comm_id),
         c.nranks > 0 ? fmt::format("{}/{}", c.local_ranks, c.nranks) : fmt::format("{}", c.local_ranks),
         fmt::format("{}", c.instances), fmt::format("{}", c.incomplete), dur(c.skew.quantile(0.5)),
         dur(c.skew.quantile(0.99)), dur(static_cast<double>(c.skew.max())),
         c.straggler >= 0 ? fmt::format("rank {}", c.straggler) : std::string("-")});
    for (const auto& r : c.ranks) {
      details += fmt::format("  {} rank {} (pid {}): last in {} of {}, {} late on average{}\n",
                             comm_cell(c.comm_id), r.rank, r.pid, r.last, r.instances,
                             format_duration(r.mean_lateness_ns), r.straggler ? "  <- straggler" : "");
    }
    if (c.mismatched > 0 || c.late > 0 || c.pending > 0) {
      details += fmt::format("  {}: {} left out (sizes disagreed), {} late calls, {} still waiting\n",
                             comm_cell(c.comm_id), c.mismatched, c.late, c.pending);
    }
  }
  out += render_columns(cells, {false, true, true, true, true, true, true, false});
  out += details;
  if (skew.untracked_calls > 0) {
    out += fmt::format("({} calls of communicators or ranks beyond the caps not matched)\n",
                       skew.untracked_calls);
  }
  return out;
}

// Per row whose kernels the hook timed: per size class and in all, as nccl-tests prints.
std::string render_gpu(const std::vector<analysis::NcclRow>& rows, std::uint64_t unjoined) {
  std::vector<std::vector<std::string>> cells = {
      {"comm", "function", "size", "calls", "kernels", "gpu p50", "algbw", "busbw"}};
  for (const auto& r : rows) {
    if (!r.gpu) continue;
    const auto& g = *r.gpu;
    for (const auto& sz : g.sizes) {
      cells.push_back({comm_cell(r.comm_id), r.function,
                       sz.min_bytes == sz.max_bytes
                           ? format_bytes(sz.min_bytes)
                           : fmt::format("{}-{}", format_bytes(sz.min_bytes), format_bytes(sz.max_bytes)),
                       fmt::format("{}", sz.calls), "", format_duration(sz.p50_ns),
                       format_bandwidth(sz.algbw), format_bandwidth(sz.busbw)});
    }
    cells.push_back({comm_cell(r.comm_id), r.function, "all", fmt::format("{}", g.calls),
                     fmt::format("{}", g.kernels), format_duration(g.p50_ns), format_bandwidth(g.algbw),
                     format_bandwidth(g.busbw)});
  }
  if (cells.size() == 1) return {};
  std::string out =
      "\nnccl on the GPU (kernels the hook timed, joined to their calls; algbw, busbw: nccl-tests' size "
      "over the kernels' GPU time, docs/gpu-time.md)\n";
  out += render_columns(cells, {false, false, true, true, true, true, true, true});
  if (unjoined > 0) out += fmt::format("({} NCCL kernels timed joined no call)\n", unjoined);
  return out;
}

}  // namespace

std::string format_bandwidth(const std::optional<double>& bytes_per_second) {
  if (!bytes_per_second) return "-";
  const double gb = *bytes_per_second / 1e9;
  return fmt::format(fmt::runtime(gb < 9.995   ? "{:.2f} GB/s"
                                  : gb < 99.95 ? "{:.1f} GB/s"
                                               : "{:.0f} GB/s"),
                     gb);
}

std::string render_nccl_table(const analysis::NcclStats& stats, const analysis::NcclSkewSummary& skew,
                              std::size_t max_rows) {
  const auto rows = stats.rows();
  if (rows.empty()) return {};
  std::string out =
      "\nnccl (all of this node's ranks per communicator; algbw, busbw: nccl-tests' size over the "
      "host-side call time, docs/report.md)\n";
  std::vector<std::vector<std::string>> cells = {
      {"comm", "function", "nranks", "calls", "errors", "bytes", "p50", "algbw", "busbw"}};
  const std::size_t n = std::min(rows.size(), max_rows);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    cells.push_back({comm_cell(r.comm_id), r.function, rank_cell(r.nranks), fmt::format("{}", r.calls),
                     fmt::format("{}", r.errors), format_bytes(r.bytes),
                     r.timed > 0 ? format_duration(r.p50_ns) : std::string("-"), format_bandwidth(r.algbw),
                     format_bandwidth(r.busbw)});
  }
  out += render_columns(cells, {false, false, true, true, true, true, true, true, true});
  if (rows.size() > n) out += fmt::format("({} more rows not shown; all in --json)\n", rows.size() - n);
  if (stats.folded_calls() > 0) {
    out += fmt::format("({} calls of communicators beyond the key cap not shown)\n", stats.folded_calls());
  }
  return out + render_gpu(rows, stats.gpu_unjoined()) + render_skew(skew);
}

}  // namespace eacgm::exporting
