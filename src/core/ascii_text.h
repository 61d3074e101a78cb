// ASCII text helpers for protocol text (HTTP headers, the Prometheus text format): a
// case-insensitive comparison and trimming of the blanks (spaces, tabs) around a value.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace eacgm {

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace eacgm
