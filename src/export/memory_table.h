// The memory part of `eacgm run`'s summary: per traced process and device, what it
// allocated and freed through the CUDA APIs, what it holds (or, once exited, leaked).
#pragma once

#include <cstdint>
#include <string>

#include "analysis/memory_ledger.h"

namespace eacgm::exporting {

// "512 B", "1.50 KiB", "3.00 MiB", "1.25 GiB": binary units, three significant digits.
std::string format_bytes(std::uint64_t bytes);

// "memory" and one row per (process, device): allocs, frees, live, peak, leaks, leaked,
// double frees, unknown frees, failed allocations; then the largest leaks of each
// exited process. Empty when no memory call was traced.
std::string render_memory_table(const analysis::MemorySummary& memory, std::size_t max_leaks_shown = 3);

}  // namespace eacgm::exporting
