// Aligned text columns for the terminal tables (`eacgm gpu`, the GPU part of `eacgm run`)
// and the cells they share.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm::exporting {

// Each column padded to its widest cell, two spaces apart; `right[i]` right-aligns
// column i (numbers). Trailing spaces are trimmed; every row ends in '\n'.
std::string render_columns(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right);

// The value through `format` ("{}%", "{:.1f}"), or "-" when absent.
template <typename T>
std::string or_dash(const std::optional<T>& v, const char* format = "{}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

// A ratio (0..1, a GPM activity) as a whole percentage; "-" when absent.
std::string format_ratio_percent(const std::optional<double>& ratio);

// Whole MiB (rounded down), as nvidia-smi shows memory; "-" when absent.
std::string format_mib(const std::optional<std::uint64_t>& bytes);

}  // namespace eacgm::exporting
