// The text of a JSON document. Its strings come from traced processes, /proc and NVML
// (names, command lines, kernel names: any bytes), so bytes that are not UTF-8 become
// U+FFFD instead of nlohmann's default exception, which would end a report or the
// output thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace eacgm::exporting {

// `indent` as nlohmann's dump: -1 for one line.
template <typename Json>
std::string json_text(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace eacgm::exporting
