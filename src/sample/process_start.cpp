// A process's start time from /proc/<pid>/stat and /proc/stat's boot time.
#include "sample/process_start.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "core/proc_file.h"
#include "core/proc_stat.h"

namespace eacgm::sample {

std::optional<std::int64_t> parse_boot_time(std::string_view proc_stat) {
  constexpr std::string_view kKey = "btime ";
  for (std::size_t at = 0; at < proc_stat.size();) {
    const std::size_t end = std::min(proc_stat.find('\n', at), proc_stat.size());
    std::string_view line = proc_stat.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(kKey)) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    std::int64_t s = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), s);
    if (ec != std::errc() || ptr == line.data()) return std::nullopt;
    return s;
  }
  return std::nullopt;
}

std::optional<std::int64_t> proc_start_ns(std::uint32_t pid) {
  // /proc/stat's interrupt counts come before btime and grow with the machine's IRQs.
  static const std::int64_t boot_s =
      parse_boot_time(read_small_file("/proc/stat", std::size_t{4} << 20).value_or("")).value_or(0);
  const auto st = read_proc_stat(pid);
  if (!st) return std::nullopt;
  const auto hz = static_cast<std::int64_t>(sysconf(_SC_CLK_TCK));
  return boot_s * 1'000'000'000 +
         static_cast<std::int64_t>(st->start_ticks) * (1'000'000'000 / (hz > 0 ? hz : 100));
}

}  // namespace eacgm::sample
