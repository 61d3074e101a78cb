// The /proc/<pid>/stat reader.
#include "core/proc_stat.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <limits>
#include <sstream>

namespace eacgm {

std::optional<ProcStat> read_proc_stat(std::uint32_t pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(paren + 1));
  char state = 0;
  long long ppid = -1;
  if (!(rest >> state >> ppid) || ppid < 0) return std::nullopt;
  ProcStat s{state, static_cast<std::uint32_t>(ppid)};
  long long pgrp = -1, session = -1, tty_nr = 0, tpgid = -1;
  if (rest >> pgrp >> session >> tty_nr >> tpgid) {
    s.pgrp = pgrp;
    s.tty_nr = tty_nr;
    s.tpgid = tpgid;
    unsigned long long flags = 0, minflt = 0, cminflt = 0, majflt = 0, cmajflt = 0, utime = 0, stime = 0;
    if (rest >> flags) s.flags = flags;
    if (rest >> minflt >> cminflt >> majflt >> cmajflt >> utime >> stime) {
      s.cpu_ticks = utime + stime;
      long long cutime = 0, cstime = 0, priority = 0, nice = 0, threads = 0, itreal = 0;
      unsigned long long start = 0;
      if (rest >> cutime >> cstime >> priority >> nice >> threads >> itreal >> start) s.start_ticks = start;
    }
  }
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
