// Aligned text columns for the terminal tables (`eacgm gpu`, the GPU part of `eacgm run`)
// and the cells they share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm::exporting {

// Each column padded to its widest cell, two spaces apart; `right[i]` right-aligns
// column i (numbers). Trailing spaces are trimmed; every row ends in '\n'.
std::string render_columns(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right);

// Whole MiB (rounded down), as nvidia-smi shows memory; "-" when absent.
std::string format_mib(const std::optional<std::uint64_t>& bytes);

}  // namespace eacgm::exporting
