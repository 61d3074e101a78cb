// The JSON documents' type (insertion-ordered) and the one rule for what is not known:
// null.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace eacgm::exporting {

using json = nlohmann::ordered_json;

// The value, or null for what is not known.
template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace eacgm::exporting
