// How calls are seen (docs/overhead.md): per call (a record each, paired entry and exit)
// or always-on (counted at entry, one trap per call, durations sampled). Shared by the
// probes' selection, the session, the agent and the commands that name it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace eacgm {

enum class TraceMode : std::uint8_t { kPerCall, kAlwaysOn };

// "per-call" or "always-on", as `[trace] mode` and `--mode` spell them.
inline std::string_view trace_mode_name(TraceMode mode) {
  return mode == TraceMode::kPerCall ? "per-call" : "always-on";
}

// The mode `text` names; nullopt when it names none.
inline std::optional<TraceMode> parse_trace_mode(std::string_view text) {
  if (text == "per-call") return TraceMode::kPerCall;
  if (text == "always-on") return TraceMode::kAlwaysOn;
  return std::nullopt;
}

}  // namespace eacgm
