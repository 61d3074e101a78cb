// [hangs]'s keys and their ranges.
#include "agent/hangs_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::agent {
namespace {

Status read_hangs(const ConfigTable& table, HangsConfig& hangs) {
  constexpr std::string_view kKeys[] = {"min_age_s", "hang_after_s", "in_flight"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_number("min_age_s", 0, 86400, hangs.min_age_s); !s) return s;
  if (auto s = table.read_number("hang_after_s", 0, 864000, hangs.hang_after_s); !s) return s;
  return table.read_bool("in_flight", hangs.in_flight);
}

}  // namespace

void add_hangs_section(ConfigSections& sections, HangsConfig& hangs) {
  sections.add_table<read_hangs>("hangs", hangs);
}

}  // namespace eacgm::agent
