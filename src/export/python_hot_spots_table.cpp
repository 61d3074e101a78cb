// Python hot spots rendering.
#include "export/python_hot_spots_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? std::string("-") : fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / whole);
}

std::string where(const std::string& file, int line) { return fmt::format("{}:{}", file, line); }

// A function row's place: its file and first line, or what a native frame is.
std::string where(const analysis::PythonFunctionRow& f) {
  return f.native ? std::string("(traced call)") : where(f.file, f.line);
}

}  // namespace

std::string python_sampling_note(std::uint32_t hz) {
  return fmt::format("sampled at {} Hz per CPU; shares of on-CPU samples, not exact calls or times", hz);
}

std::string render_python_hot_spots(const analysis::PythonHotSpots& hot, std::size_t max_rows) {
  if (hot.processes.empty()) return {};
  std::string out = fmt::format("Python hot spots (sampled; {})\n", python_sampling_note(hot.hz));
  for (const auto& p : hot.processes) {
    out +=
        fmt::format("{} (pid {}): {} samples, {} in Python code", p.comm, p.pid, p.samples, p.python_samples);
    if (p.threads.size() > 1) out += fmt::format(", {} threads", p.threads.size());
    if (p.truncated > 0) out += fmt::format(", {} stacks cut at 64 frames", p.truncated);
    out += "\n";
    if (p.python_samples == 0) continue;
    std::vector<std::vector<std::string>> cells = {
        {"self%", "total%", "self", "total", "function", "file:line"}};
    const std::size_t n = std::min(p.functions.size(), max_rows);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& f = p.functions[i];
      cells.push_back({percent(f.self, p.python_samples), percent(f.total, p.python_samples),
                       fmt::format("{}", f.self), fmt::format("{}", f.total), f.function, where(f)});
    }
    out += render_columns(cells, {true, true, true, true, false, false});
    if (p.functions.size() > n)
      out += fmt::format("({} more functions; all in --json)\n", p.functions.size() - n);
    // The lines the process ran most (of the innermost Python frames), and the traced call
    // each waited in, when one did.
    const std::size_t shown = std::min<std::size_t>(p.lines.size(), 5);
    const bool calls = std::any_of(p.lines.begin(), p.lines.begin() + static_cast<std::ptrdiff_t>(shown),
                                   [](const analysis::PythonLineRow& l) { return !l.call.empty(); });
    std::vector<std::vector<std::string>> lines = {{"self%", "self", "hot line", "in"}};
    if (calls) lines[0].push_back("in call");
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& l = p.lines[i];
      lines.push_back(
          {percent(l.self, p.python_samples), fmt::format("{}", l.self), where(l.file, l.line), l.function});
      if (calls) lines.back().push_back(l.call.empty() ? std::string("-") : l.call);
    }
    if (lines.size() > 1) out += render_columns(lines, {true, true, false, false, false});
    if (p.threads.size() > 1) {
      std::string threads = "threads (samples):";
      for (std::size_t i = 0; i < std::min<std::size_t>(p.threads.size(), 8); ++i) {
        threads += fmt::format(" {} ({})", p.threads[i].tid, p.threads[i].samples);
      }
      if (p.threads.size() > 8) threads += fmt::format(" and {} more", p.threads.size() - 8);
      out += threads + "\n";
    }
  }
  return out;
}

}  // namespace eacgm::exporting
