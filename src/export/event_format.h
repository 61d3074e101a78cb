// Event output formats for `eacgm trace`: JSON Lines (the stable public schema,
// docs/events.md) and a one-line human text form.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "core/call_event.h"

namespace eacgm::exporting {

// {"ts_ns":..,"pid":..,"tid":..,"comm":"..","domain":"..","name":"..","dur_ns":..,
//  ["run_delay_ns":..,] "ret":..,"args":{...}} followed by '\n'.
void append_jsonl(fmt::memory_buffer& out, const CallEvent& e);

// The pieces of a JSON Lines call record that other formats carry as they are:
// `"ret":<value>` and, for a failed call whose result code has a name,
// `,"ret_name":".."` (calls with an exit only); and the args object `{..}`: captured
// arguments by name, then derived values (bytes, kernel, NCCL communicator fields).
void append_json_result(fmt::memory_buffer& out, const CallEvent& e);
void append_json_args(fmt::memory_buffer& out, const CallEvent& e);
// The same arguments as a JSON value of a document built with nlohmann (the calls in
// flight: ordered_json, the anomalies: json); {} for a call without its probe.
template <typename Json = nlohmann::json>
Json json_args(const CallEvent& e) {
  if (!e.probe) return Json::object();
  fmt::memory_buffer buf;
  append_json_args(buf, e);
  return Json::parse(std::string_view(buf.data(), buf.size()), nullptr, false);
}
// The fields written only when they apply, each after a comma: `,"nested":true`,
// `,"captured":true` (recorded into a CUDA graph, not executed) and, for a graph launch
// whose graph was seen being made, `,"graph":{"nodes":..,"kernels":..,"memsets":..,"copies":..}`.
void append_json_markers(fmt::memory_buffer& out, const CallEvent& e);

// "12:34:56.789012 " (local time, microseconds): the start of every text line.
void append_clock(fmt::memory_buffer& out, std::uint64_t ts_ns);

// 12:34:56.789012 comm[pid/tid] domain name(arg=value, ...) = ret  1.23 µs
void append_text(fmt::memory_buffer& out, const CallEvent& e);

// JSON string escaping (quotes included).
void append_json_string(fmt::memory_buffer& out, std::string_view s);

}  // namespace eacgm::exporting
