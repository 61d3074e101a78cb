// Column widths from the widest cell; ASCII cells, so bytes are columns.
#include "export/text_columns.h"

#include <fmt/format.h>

#include <algorithm>

namespace eacgm::exporting {

std::string render_columns(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right) {
  std::vector<std::size_t> width(right.size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) {
      if (i > 0) line += "  ";
      line += right[i] ? fmt::format("{:>{}}", r[i], width[i]) : fmt::format("{:<{}}", r[i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

std::string format_ratio_percent(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.0f}%", *ratio * 100.0) : std::string("-");
}

std::string format_mib(const std::optional<std::uint64_t>& bytes) {
  return bytes ? fmt::format("{}", *bytes >> 20) : std::string("-");
}

}  // namespace eacgm::exporting
