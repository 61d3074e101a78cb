// Reads /proc/<pid>/stat and walks parent links through it.
#include "sample/process_tree.h"

#include <algorithm>
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
  return ProcStat{state, static_cast<std::uint32_t>(ppid)};
}

std::optional<std::uint32_t> parent_pid(std::uint32_t pid, const std::string& proc_root) {
  auto stat = read_proc_stat(pid, proc_root);
  if (!stat) return std::nullopt;
  return stat->ppid;
}

bool in_process_tree(std::uint32_t pid, const std::vector<int>& roots, const std::string& proc_root) {
  auto is_root = [&roots](std::uint32_t p) {
    return std::any_of(roots.begin(), roots.end(),
                       [p](int r) { return r > 0 && static_cast<std::uint32_t>(r) == p; });
  };
  // Bounded walk: a pid namespace nests at most a few dozen levels in practice, and a
  // corrupt chain must not loop.
  for (int depth = 0; depth < 256 && pid > 1; ++depth) {
    if (is_root(pid)) return true;
    auto parent = parent_pid(pid, proc_root);
    if (!parent || *parent == pid) return false;
    pid = *parent;
  }
  return pid == 1 && is_root(1);
}

}  // namespace eacgm
