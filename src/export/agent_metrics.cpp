// The agent's own families: /proc/self for its cost, uname for the kernel it runs on,
// the build's version and commit.
#include "export/agent_metrics.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "core/build_info.h"
#include "export/metrics_table.h"

namespace eacgm::exporting {
namespace {

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.release) : std::string();
}

}  // namespace

void append_agent_metrics(ExpositionWriter& out, const AgentInfo& info) {
  // /proc/self/stat fields 14 and 15 (utime, stime) in clock ticks; statm field 2 in pages.
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    begin_family(out, "eacgm_agent_cpu_seconds_total");
    out.add({}, static_cast<double>(utime + stime) / ticks);
  }
  std::ifstream statm("/proc/self/statm");
  unsigned long long size = 0, resident = 0;
  if (statm >> size >> resident) {
    begin_family(out, "eacgm_agent_resident_memory_bytes");
    out.add({},
            static_cast<std::uint64_t>(resident * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE))));
  }
  begin_family(out, "eacgm_agent_start_time_seconds");
  out.add({}, info.start_time_seconds);
  // An info metric: what runs, as labels of a constant 1 (joined onto other series).
  static const std::string kernel = kernel_release();
  begin_family(out, "eacgm_build_info");
  out.add({{"version", std::string(build_version())},
           {"commit", std::string(build_commit())},
           {"kernel", kernel},
           {"mode", info.mode}},
          std::uint64_t{1});
  begin_family(out, "eacgm_gpu_sampling_active");
  out.add({}, std::uint64_t{info.gpu_sampling ? 1u : 0u});
}

}  // namespace eacgm::exporting
