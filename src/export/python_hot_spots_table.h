// The "Python hot spots (sampled)" section of `eacgm run`: per Python process, the
// functions by the share of samples they were running in (self) and on the stack
// (total), the hottest lines, and the threads.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/python_profile.h"

namespace eacgm::exporting {

// The line every view of the profile starts with: what the numbers are.
std::string python_sampling_note(std::uint32_t hz);

// Empty when nothing was sampled; `max_rows` functions and lines per process.
std::string render_python_hot_spots(const analysis::PythonHotSpots& hot, std::size_t max_rows = 15);

}  // namespace eacgm::exporting
