// Memory ledger table: byte sizes in binary units, "-" where a value does not apply.
#include "export/memory_table.h"

#include <fmt/format.h>

#include <vector>

#include "export/text_columns.h"

namespace eacgm::exporting {

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  const char* format = v >= 100 ? "{:.0f} {}" : v >= 10 ? "{:.1f} {}" : "{:.2f} {}";
  return fmt::format(fmt::runtime(format), v, kUnits[unit]);
}

std::string render_memory_table(const analysis::MemorySummary& memory, std::size_t max_leaks_shown) {
  if (memory.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"pid", "process", "device", "state", "allocs", "frees", "live", "peak", "leaks", "leaked",
                  "double frees", "unknown frees", "failed"});
  std::string details;
  for (const auto& r : memory.rows) {
    rows.push_back({fmt::format("{}", r.pid), r.comm.empty() ? "-" : r.comm,
                    r.device < 0 ? std::string("-") : fmt::format("{}", r.device),
                    r.exited ? "exited" : "running", fmt::format("{}", r.allocations),
                    fmt::format("{}", r.frees), format_bytes(r.live_bytes), format_bytes(r.peak_bytes),
                    r.exited ? fmt::format("{}", r.leak_count) : "-",
                    r.exited ? format_bytes(r.leak_bytes) : "-", fmt::format("{}", r.double_frees),
                    fmt::format("{}", r.unknown_frees), fmt::format("{}", r.failed_allocations)});
    for (std::size_t i = 0; i < r.largest_leaks.size() && i < max_leaks_shown; ++i) {
      const auto& l = r.largest_leaks[i];
      details += fmt::format("  pid {}{}: leaked {} ({}) at {:#x}\n", r.pid,
                             r.device < 0 ? std::string() : fmt::format(" device {}", r.device),
                             format_bytes(l.size), analysis::alloc_kind_name(l.kind), l.ptr);
    }
    if (r.largest_leaks.size() > max_leaks_shown) {
      details += fmt::format("  pid {}: {} more leaks\n", r.pid, r.leak_count - max_leaks_shown);
    }
  }
  std::string out = "\nmemory (CUDA allocations traced; leaks: never freed by the process's exit)\n";
  out +=
      render_columns(rows, {true, false, true, false, true, true, true, true, true, true, true, true, true});
  out += details;
  if (memory.exited_dropped > 0) {
    out += fmt::format("({} earlier exited processes are not in this table)\n", memory.exited_dropped);
  }
  if (memory.overflow_calls > 0) {
    out +=
        fmt::format("({} memory calls of further processes are not in this table)\n", memory.overflow_calls);
  }
  return out;
}

}  // namespace eacgm::exporting
