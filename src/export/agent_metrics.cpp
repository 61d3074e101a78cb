// The agent's own families: /proc/self for its cost, uname for the kernel it runs on,
// the build's version and commit.
#include "export/agent_metrics.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "core/build_info.h"
#include "core/proc_file.h"
#include "core/proc_stat.h"
#include "export/metrics_table.h"

namespace eacgm::exporting {
namespace {

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.release) : std::string();
}

}  // namespace

void append_agent_metrics(ExpositionWriter& out, const AgentInfo& info) {
  // /proc/self/stat's utime + stime in clock ticks; statm field 2 in pages.
  if (const auto stat = read_proc_stat(static_cast<std::uint32_t>(getpid()))) {
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    begin_family(out, "eacgm_agent_cpu_seconds_total");
    out.add({}, static_cast<double>(stat->cpu_ticks) / ticks);
  }
  const std::string statm_text = read_small_file("/proc/self/statm", 256).value_or("");
  std::string_view statm = statm_text;
  unsigned long long size = 0, resident = 0;
  if (parse_number(next_field(statm), size) && parse_number(next_field(statm), resident)) {
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
