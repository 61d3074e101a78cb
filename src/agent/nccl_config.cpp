// [nccl]'s keys and their ranges.
#include "agent/nccl_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::agent {
namespace {

Status read_nccl(const ConfigTable& table, NcclConfig& nccl) {
  constexpr std::string_view kKeys[] = {"flight_recorder_entries"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  return table.read_integer("flight_recorder_entries", 1, 4096, nccl.flight_recorder_entries);
}

}  // namespace

void add_nccl_section(ConfigSections& sections, NcclConfig& nccl) {
  sections.add_table<read_nccl>("nccl", nccl);
}

}  // namespace eacgm::agent
