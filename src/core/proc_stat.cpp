// The /proc/<pid>/stat reader.
#include "core/proc_stat.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <string_view>

#include "core/proc_file.h"

namespace eacgm {

std::optional<ProcStat> read_proc_stat(std::uint32_t pid, const std::string& proc_root) {
  // The line is a few hundred bytes (the command name at most 16 of them).
  const auto text = read_small_file(proc_root + "/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return std::nullopt;
  const std::string_view line = std::string_view(*text).substr(0, text->find('\n'));
  const auto paren = line.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(paren + 1);
  const std::string_view state = next_field(rest);
  long long ppid = -1;
  if (state.size() != 1 || !parse_number(next_field(rest), ppid) || ppid < 0) return std::nullopt;
  ProcStat s{state[0], static_cast<std::uint32_t>(ppid)};
  // The later fields in groups, as far as they read: fields 5 to 8, 9, 10 to 15, 16 to 22.
  long long pgrp = -1, session = -1, tty_nr = 0, tpgid = -1;
  if (!parse_number(next_field(rest), pgrp) || !parse_number(next_field(rest), session) ||
      !parse_number(next_field(rest), tty_nr) || !parse_number(next_field(rest), tpgid)) {
    return s;
  }
  s.pgrp = pgrp;
  s.tty_nr = tty_nr;
  s.tpgid = tpgid;
  if (!parse_number(next_field(rest), s.flags)) return s;
  unsigned long long faults = 0, utime = 0, stime = 0;
  for (int i = 0; i < 4; ++i) {  // minflt, cminflt, majflt, cmajflt
    if (!parse_number(next_field(rest), faults)) return s;
  }
  if (!parse_number(next_field(rest), utime) || !parse_number(next_field(rest), stime)) return s;
  s.cpu_ticks = utime + stime;
  long long skipped = 0;
  for (int i = 0; i < 6; ++i) {  // cutime, cstime, priority, nice, num_threads, itrealvalue
    if (!parse_number(next_field(rest), skipped)) return s;
  }
  parse_number(next_field(rest), s.start_ticks);
  return s;
}

bool process_alive(std::uint32_t pid) {
  auto stat = read_proc_stat(pid);
  return stat && stat->state != 'Z' && stat->state != 'X';
}

bool process_exists(std::uint32_t pid) {
  // 0 and values past pid_t's range would name a process group or every process.
  if (pid == 0 || pid > static_cast<std::uint32_t>(std::numeric_limits<pid_t>::max())) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

std::optional<ProcessCpu> process_cpu(std::uint32_t pid, const std::string& proc_root) {
  auto stat = read_proc_stat(pid, proc_root);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  static const double ns_per_tick = 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return ProcessCpu{static_cast<double>(stat->cpu_ticks) * ns_per_tick,
                    static_cast<double>(stat->start_ticks) * ns_per_tick};
}

}  // namespace eacgm
