// Test support: reading eacgm's JSON Lines output and the test programs' own
// "NAME ret=N" ground-truth lines.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.h"

namespace eacgm::test {

using nlohmann::json;

// The JSON objects among the lines (a traced command may print on the same stream).
inline std::vector<json> parse_events(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '{') out.push_back(json::parse(line));
  }
  return out;
}

// Every line of a JSON Lines file (eacgm -o): each must be a JSON value.
inline std::vector<json> read_jsonl(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

inline std::vector<json> events_of(const std::vector<json>& events, int pid) {
  std::vector<json> out;
  for (const auto& e : events) {
    if (e["pid"].get<int>() == pid) out.push_back(e);
  }
  return out;
}

inline std::map<std::string, int> count_by_name(const std::vector<json>& events) {
  std::map<std::string, int> n;
  for (const auto& e : events) n[e["name"].get<std::string>()]++;
  return n;
}

// "NAME ret=N" lines of a test program: the return codes it saw, per function, in order.
inline std::map<std::string, std::vector<int>> program_returns(const std::string& out) {
  std::map<std::string, std::vector<int>> r;
  std::regex line_re(R"((\w+) ret=(-?\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line_re); it != std::sregex_iterator(); ++it) {
    r[(*it)[1]].push_back(std::stoi((*it)[2]));
  }
  return r;
}

}  // namespace eacgm::test
