// One line of /proc/<pid>/maps, parsed without exceptions: for readers that need the
// whole mapping (address range, offset, path), not only its file's identity.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace eacgm {

// "start-end perms offset major:minor inode   path"; views into the line.
struct MapsLine {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::string_view perms;  // "r-xp"
  std::uint64_t offset = 0;
  std::string_view path;  // "" when anonymous; "[vdso]", "/x (deleted)" as the kernel writes them

  bool executable() const { return perms.size() > 2 && perms[2] == 'x'; }
};

// nullopt when the line does not have that form.
std::optional<MapsLine> parse_maps_line(std::string_view line);

}  // namespace eacgm
