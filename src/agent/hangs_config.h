// [hangs]: the waiting calls in flight and the hangs: from what age a call is listed, and
// from what age it is a hang whatever it waits for. The agent hands the ages to the
// session (stuck stacks) and the analysis (in-flight calls, hangs).
#pragma once

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::agent {

struct HangsConfig {
  // A waiting call in flight is listed (/api/v1/inflight, `run --json`, the in-flight
  // metrics) once it is at least this old, in seconds; a communicator's open collective
  // too, for the hang diagnosis.
  double min_age_s = 5.0;
  // A call in flight this long is a hang (0: only the communicator rule says hangs).
  double hang_after_s = 600.0;
  // false: waiting calls are not kept in the kernel's table (no calls in flight, no
  // hangs, no Python stacks ending in a waiting call); the cost benchmark's switch.
  bool in_flight = true;
};

// Adds [hangs] to the file's sections, read into `hangs`.
void add_hangs_section(ConfigSections& sections, HangsConfig& hangs);

}  // namespace eacgm::agent
