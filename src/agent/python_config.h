// [python]: which Python calls are reported, how often Python stacks are sampled and how
// much of them the profile keeps. The agent hands each part to the stage that uses it:
// the filter to the session's pairing, the limits to the analysis's profile.
#pragma once

#include <cstdint>
#include <string>

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::agent {

struct PythonConfig {
  // Glob (fnmatch) on the source file path of reported Python calls; "" reports all.
  // Applied in user space: the probes still fire for every Python call.
  std::string file_filter;
  // Python stack sampling (`eacgm run`, `eacgm serve`; `eacgm trace --folded`): samples
  // per second on each CPU while a traced Python thread is on it (0: none). A prime, so
  // samples do not lock onto timer ticks.
  std::uint32_t sample_hz = 99;
  // `eacgm serve`'s profile: the samples of about the last window_s seconds (it moves in
  // steps of a fifth), and at most max_rows thread, function and line keys and
  // max_stacks distinct stacks in it (`run` keeps the whole run under the same caps).
  std::uint32_t window_s = 300;
  std::uint32_t max_rows = 100000;
  std::uint32_t max_stacks = 20000;
  // CPython 3.11 with USDT probes fires function__entry only while its line probe's
  // semaphore is raised (probe/python_usdt.h). true: eacgm raises it, so calls get
  // durations, and the interpreter runs its slower tracing dispatch meanwhile; false:
  // exact counts without durations.
  bool usdt_durations = true;
};

// Adds [python] to the file's sections, read into `python`.
void add_python_section(ConfigSections& sections, PythonConfig& python);

}  // namespace eacgm::agent
