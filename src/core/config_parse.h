// Reads the TOML configuration file into a Config. Every error names
// source:line:column and what to change; unknown keys are errors, never ignored.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/config.h"
#include "core/result.h"

namespace eacgm {

// Parses config text. `source_name` (usually the file path) prefixes every message.
// An empty text yields the defaults of Config.
Result<Config> parse_config(std::string_view text, std::string_view source_name);

// "per-call" / "always-on", as `[trace] mode` and `--mode` spell them; nullopt otherwise.
std::optional<TraceMode> parse_trace_mode(std::string_view text);
// "per-call" or "always-on".
std::string_view trace_mode_name(TraceMode mode);

// Reads `path` and parses it; "cannot read config PATH: <reason>" when it cannot be read.
Result<Config> load_config_file(const std::string& path);

// The embedded defaults when `path` is empty (no --config given), else load_config_file.
Result<Config> load_config(const std::string& path);

}  // namespace eacgm
