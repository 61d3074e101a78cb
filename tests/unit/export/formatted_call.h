// Test support: a call of a built-in probe, its arguments set by name, and the call as
// the formats write it (one JSON object, one text line).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "builtin_probe.h"
#include "export/event_format.h"

namespace eacgm::test {

inline CallEvent call_of(const std::string& fn, std::int64_t ret = 0) {
  CallEvent e;
  e.probe = builtin_probe(fn);
  e.has_exit = true;
  e.dur_ns = 1000;
  e.ret = ret;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  return e;
}

inline void set_arg(CallEvent& e, const std::string& name, std::uint64_t v) {
  for (std::size_t i = 0; i < e.probe->spec.args.size(); ++i) {
    if (e.probe->spec.args[i].name == name) e.args[i] = v;
  }
}

inline nlohmann::json to_json(const CallEvent& e) {
  fmt::memory_buffer out;
  exporting::append_jsonl(out, e);
  return nlohmann::json::parse(std::string(out.data(), out.size()));
}

inline std::string to_text(const CallEvent& e) {
  fmt::memory_buffer out;
  exporting::append_text(out, e);
  return std::string(out.data(), out.size());
}

}  // namespace eacgm::test
