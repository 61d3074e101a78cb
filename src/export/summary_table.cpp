// Summary table rendering: cell formatting, column widths, alignment.
#include "export/summary_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/result_names.h"

namespace eacgm::exporting {

std::string format_duration(double ns) {
  if (!(ns >= 0.0)) return "-";
  if (ns < 999.5) return fmt::format("{:.0f} ns", ns);
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr std::array<Unit, 3> kUnits{{{1e3, "us"}, {1e6, "ms"}, {1e9, "s"}}};
  for (std::size_t i = 0; i < kUnits.size(); ++i) {
    const double v = ns / kUnits[i].scale;
    // Move up a unit before rounding would print "1000".
    if (v >= 999.5 && i + 1 < kUnits.size()) continue;
    const char* spec = v < 9.995 ? "{:.2f} {}" : v < 99.95 ? "{:.1f} {}" : "{:.0f} {}";
    return fmt::format(fmt::runtime(spec), v, kUnits[i].name);
  }
  return "-";  // unreachable: the last unit always returns
}

namespace {
// "nested" is shown only when some row has nested calls (tracing the driver and
// the runtime together), so runtime-only tables keep their shape.
constexpr std::size_t kColumns = 10;
constexpr std::size_t kNestedColumn = 3;
constexpr std::array<const char*, kColumns> kHeader{"domain", "function", "calls", "nested", "errors",
                                                    "total",  "mean",     "p50",   "p99",    "max"};
constexpr std::size_t kNameColumns = 2;  // left-aligned; the rest are numbers

std::string clip(const std::string& s, std::size_t width) {
  if (width < 4 || s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}
// An estimate (duty cycle) reads "~12345±67".
std::string calls_cell(const analysis::CallSummaryRow& r) {
  if (r.estimated == 0) return fmt::format("{}", r.calls);
  return fmt::format("~{}±{}", r.calls, std::llround(r.calls_error));
}
// Sampled errors read as their share of every call: "~1234" (errors x calls / timed).
std::string errors_cell(const analysis::CallSummaryRow& r) {
  if (!r.sampled() || r.errors == 0) return fmt::format("{}", r.errors);
  return fmt::format("~{}", std::llround(static_cast<double>(r.errors) * static_cast<double>(r.calls) /
                                         static_cast<double>(std::max<std::uint64_t>(r.timed, 1))));
}
}  // namespace

std::string render_table(const std::vector<analysis::CallSummaryRow>& rows,
                         const SummaryTableOptions& options) {
  const std::size_t n = options.max_rows == 0 ? rows.size() : std::min(rows.size(), options.max_rows);
  bool any_nested = false;
  for (const auto& r : rows) any_nested = any_nested || r.nested > 0;
  std::vector<std::array<std::string, kColumns>> cells;
  cells.reserve(n + 1);
  cells.push_back({});
  for (std::size_t c = 0; c < kColumns; ++c) cells[0][c] = kHeader[c];
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    const bool timed = r.timed > 0;
    auto dur = [timed](double ns) { return timed ? format_duration(ns) : std::string("-"); };
    cells.push_back({r.domain.empty() ? "-" : r.domain,
                     r.function.empty() ? "-" : clip(r.function, options.max_function_width), calls_cell(r),
                     fmt::format("{}", r.nested), errors_cell(r), dur(static_cast<double>(r.total_ns)),
                     dur(r.mean_ns), dur(r.p50_ns), dur(r.p99_ns), dur(static_cast<double>(r.max_ns))});
  }

  std::array<std::size_t, kColumns> width{};
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < kColumns; ++c) {
      if (c == kNestedColumn && !any_nested) continue;
      if (c > 0) line += "  ";
      if (c < kNameColumns) {
        line += fmt::format("{:<{}}", row[c], width[c]);
      } else {
        line += fmt::format("{:>{}}", row[c], width[c]);
      }
    }
    out += line;
    out += '\n';
  }
  return out;
}

std::string render_error_codes(const std::vector<analysis::CallSummaryRow>& rows, std::size_t max_rows) {
  const std::size_t n = max_rows == 0 ? rows.size() : std::min(rows.size(), max_rows);
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    if (r.errors == 0) continue;
    if (out.empty()) out = "errors by code:\n";
    out += fmt::format("  {} {}:", r.domain.empty() ? "-" : r.domain, r.function.empty() ? "-" : r.function);
    std::uint64_t named = 0;
    const char* sep = " ";
    for (const auto& c : r.error_codes) {
      named += c.count;
      const auto name = result_code_name(r.domain, c.code);
      if (!name.empty()) {
        out += fmt::format("{}{} x {} ({})", sep, c.count, name, c.code);
      } else {
        out += fmt::format("{}{} x code {}", sep, c.count, c.code);
      }
      sep = ", ";
    }
    if (named < r.errors) out += fmt::format("{}{} x other codes", sep, r.errors - named);
    if (r.sampled()) out += fmt::format(" (of {} sampled calls)", r.timed);
    out += '\n';
  }
  return out;
}

std::string render_table(const analysis::CallSummary& summary, const SummaryTableOptions& options) {
  const auto rows = summary.rows();
  std::string out = render_table(rows, options);
  if (options.max_rows != 0 && rows.size() > options.max_rows) {
    out += fmt::format("({} more functions not shown)\n", rows.size() - options.max_rows);
  }
  if (summary.overflow_events() > 0) {
    out += fmt::format("({} events of functions beyond the {}-function cap not counted above)\n",
                       summary.overflow_events(), summary.max_keys());
  }
  out += render_error_codes(rows, options.max_rows);
  if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.sampled() && r.errors > 0; })) {
    out +=
        "(~errors: estimated from the sampled calls, errors x calls / sampled; the always-on mode sees only "
        "their returns)\n";
  }
  const bool any_timed = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.timed > 0; });
  if (any_timed) {
    out +=
        "(durations are host-side API times, from each call's entry to its return; GPU kernel execution "
        "time is not measured)\n";
  }
  return out;
}

}  // namespace eacgm::exporting
