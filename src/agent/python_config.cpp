// [python]'s keys, their ranges, and the file filter's rule (it sees the whole path).
#include "agent/python_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::agent {
namespace {

Status read_python(const ConfigTable& table, PythonConfig& python) {
  constexpr std::string_view kKeys[] = {"file_filter", "sample_hz", "usdt_durations",
                                        "window_s",    "max_rows",  "max_stacks"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_string("file_filter", python.file_filter); !s) return s;
  if (auto s = table.read_integer("sample_hz", 0, 10000, python.sample_hz); !s) return s;
  if (auto s = table.read_bool("usdt_durations", python.usdt_durations); !s) return s;
  if (auto s = table.read_integer("window_s", 10, 86400, python.window_s); !s) return s;
  if (auto s = table.read_integer("max_rows", 100, 10000000, python.max_rows); !s) return s;
  if (auto s = table.read_integer("max_stacks", 10, 1000000, python.max_stacks); !s) return s;
  // A bare file name would never match: the filter sees the whole path.
  const std::string& filter = python.file_filter;
  if (!filter.empty() && filter[0] != '/' && filter[0] != '*') {
    constexpr std::string_view kRule = "\" is matched against the whole file path; start it with / or * ";
    return table.fail_at("file_filter",
                         {"file_filter = \"", filter, kRule, "(for example \"*/", filter, "\")"});
  }
  return {};
}

}  // namespace

void add_python_section(ConfigSections& sections, PythonConfig& python) {
  sections.add_table<read_python>("python", python);
}

}  // namespace eacgm::agent
