// Reads /proc/<pid>/stat and walks parent links through it; whether a stop would be seen.
#include "sample/process_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "core/proc_file.h"

namespace eacgm::sample {

std::optional<std::string> stop_hazard(std::uint32_t pid, const std::string& proc_root) {
  auto stat = read_proc_stat(pid, proc_root);
  if (stat && stat->tty_nr != 0 && stat->tpgid > 0 && stat->tpgid == stat->pgrp) {
    return "it is the foreground job of a terminal";
  }
  const std::string status = read_small_file(proc_root + "/" + std::to_string(pid) + "/status").value_or("");
  std::string_view tracer_text = line_after(status, "TracerPid:").value_or("");
  long long tracer = 0;
  if (parse_number(next_field(tracer_text), tracer) && tracer != 0)
    return fmt::format("it is traced by pid {} (a debugger)", tracer);
  return std::nullopt;
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

}  // namespace eacgm::sample
