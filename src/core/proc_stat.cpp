// The /proc/<pid>/stat reader.
#include "core/proc_stat.h"

#include <fstream>
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
  }
  return s;
}

bool process_running(std::uint32_t pid, const std::string& proc_root) {
  auto stat = read_proc_stat(pid, proc_root);
  return stat && stat->state != 'Z' && stat->state != 'X';
}

}  // namespace eacgm
