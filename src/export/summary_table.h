// The call summary as an aligned text table (for `eacgm` terminal output and logs):
// one row per function, human time units, sorted as CallSummary::rows() sorts them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/call_summary.h"

namespace eacgm::exporting {

struct SummaryTableOptions {
  std::size_t max_rows = 0;             // 0: every row
  std::size_t max_function_width = 60;  // longer names (templated kernels) end in "..."
};

// "850 ns", "1.23 us", "12.3 ms", "123 s": three significant digits, ASCII only so
// byte widths equal column widths.
std::string format_duration(double ns);

// Columns: domain, function, calls, errors, total, mean, p50, p99, max. Names are
// left-aligned, numbers right-aligned; "-" where a function has no timed call.
std::string render_table(const std::vector<analysis::CallSummaryRow>& rows,
                         const SummaryTableOptions& options = {});

// "errors by code:" and one line per shown function with errors, naming each result
// code ("  cuda cudaMalloc: 3 x cudaErrorMemoryAllocation (2), 1 x code 12345"); ""
// when no shown function has errors.
std::string render_error_codes(const std::vector<analysis::CallSummaryRow>& rows, std::size_t max_rows = 0);

// The same, from a summary, with a closing line when rows were cut or events fell
// beyond the key cap, so a short table never passes for a complete one; then the
// errors-by-code lines, and a note that durations are host-side API times.
std::string render_table(const analysis::CallSummary& summary, const SummaryTableOptions& options = {});

}  // namespace eacgm::exporting
