// parse_maps_line: the fields read with core/proc_file.h's readers.
#include "core/proc_maps.h"

#include "core/proc_file.h"

namespace eacgm {

std::optional<MapsLine> parse_maps_line(std::string_view line) {
  MapsLine m;
  const std::string_view range = next_field(line);
  m.perms = next_field(line);
  const std::string_view offset = next_field(line);
  next_field(line);  // major:minor
  next_field(line);  // inode
  const std::size_t dash = range.find('-');
  if (dash == std::string_view::npos || !parse_number(range.substr(0, dash), m.start, 16) ||
      !parse_number(range.substr(dash + 1), m.end, 16) || !parse_number(offset, m.offset, 16) ||
      m.perms.empty()) {
    return std::nullopt;
  }
  const std::size_t path_at = line.find_first_not_of(' ');
  m.path = path_at == std::string_view::npos ? std::string_view{} : line.substr(path_at);
  return m;
}

}  // namespace eacgm
