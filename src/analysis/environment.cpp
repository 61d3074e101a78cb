// The machine's environment: the system's clocks and /proc.
#include "analysis/environment.h"

#include "analysis/host_waits.h"
#include "analysis/inflight_calls.h"
#include "core/proc_stat.h"

namespace eacgm::analysis {

Environment Environment::machine() {
  Environment env;
  env.wall = [] { return std::chrono::system_clock::now(); };
  env.steady = [] { return std::chrono::steady_clock::now(); };
  env.process_alive = [](std::uint32_t pid) { return eacgm::process_alive(pid); };
  env.thread_alive = [](std::uint32_t pid, std::uint32_t tid) { return analysis::thread_alive(pid, tid); };
  env.process_start = [](std::uint32_t pid) { return process_start_time(pid); };
  return env;
}

}  // namespace eacgm::analysis
