// GPU work table rendering.
#include "export/gpu_work_table.h"

#include <fmt/format.h>

#include <vector>

#include "export/memory_table.h"
#include "export/text_columns.h"

namespace eacgm::exporting {

std::string render_gpu_work(const analysis::GpuWorkStats& work, std::size_t max_rows,
                            std::size_t max_name_width) {
  const auto rows = work.rows();
  const std::uint64_t unknown = work.unknown_graph_launches();
  std::string unknown_note =
      unknown == 0 ? std::string()
                   : fmt::format(
                         "({} CUDA graph launches of graphs made before tracing began: their work is "
                         "not known, so not counted)\n",
                         unknown);
  if (rows.empty()) return unknown_note;
  std::string out =
      fmt::format("gpu work: {} kernels launched, {} memsets, {} copies\n", work.total(GpuWork::kKernel),
                  work.total(GpuWork::kMemset), work.total(GpuWork::kCopy));
  std::vector<std::vector<std::string>> cells = {
      {"pid", "stream", "kind", "name", "count", "graph", "errors", "bytes"}};
  const std::size_t n = std::min(rows.size(), max_rows);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    std::string name = r.kind == GpuWork::kCopy ? r.direction : r.name;
    if (name.size() > max_name_width && max_name_width > 3) name = name.substr(0, max_name_width - 3) + "...";
    cells.push_back({fmt::format("{}", r.pid), fmt::format("{:#x}", r.stream),
                     std::string(analysis::gpu_work_kind_name(r.kind)), name.empty() ? "-" : name,
                     fmt::format("{}", r.count), fmt::format("{}", r.graph), fmt::format("{}", r.errors),
                     r.kind == GpuWork::kKernel ? "-" : format_bytes(r.bytes)});
  }
  out += render_columns(cells, {true, false, false, false, true, true, true, true});
  if (rows.size() > n) out += fmt::format("({} more rows not shown; all in --json)\n", rows.size() - n);
  if (work.folded() > 0) out += fmt::format("({} operations beyond the row cap not shown)\n", work.folded());
  if (work.exited_dropped() > 0)
    out += fmt::format(
        "({} earlier exited processes are not in this table; their operations are in the totals)\n",
        work.exited_dropped());
  return out + unknown_note;
}

}  // namespace eacgm::exporting
