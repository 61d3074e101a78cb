// /proc/<pid>/stat, read once for everyone who asks about a process's state or parent:
// the process tree (sample), the agent's end condition, the memory ledger's exits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace eacgm {

// Fields 3 to 8 of /proc/<pid>/stat: the state letter ('R', 'S', 'Z' for a zombie...),
// the parent pid, the process group, the terminal and its foreground process group.
struct ProcStat {
  char state = '?';
  std::uint32_t ppid = 0;
  std::int64_t pgrp = -1;         // process group
  std::int64_t tty_nr = 0;        // controlling terminal; 0: none
  std::int64_t tpgid = -1;        // the terminal's foreground process group; -1: none
  std::uint64_t cpu_ticks = 0;    // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK))
  std::uint64_t start_ticks = 0;  // when it started, in clock ticks since boot
  std::uint64_t flags = 0;        // the kernel's PF_* flags

  // A kernel thread (PF_KTHREAD): no user memory, no libraries, never a CUDA call.
  bool kernel_thread() const { return (flags & 0x00200000u) != 0; }
};

// /proc/<pid>/stat read after the last ')' (the command name may itself hold spaces and
// parentheses); nullopt when the process is gone or the file cannot be read.
std::optional<ProcStat> read_proc_stat(std::uint32_t pid, const std::string& proc_root = "/proc");

// Running: /proc/<pid>/stat exists and the state is neither a zombie ('Z') nor dead
// ('X'), whose memory and handles are gone.
bool process_running(std::uint32_t pid, const std::string& proc_root = "/proc");

// A process's CPU time (all its threads, user and system) in nanoseconds, at the clock
// tick's resolution, and when it started (ns since boot); nullopt when it is gone or a
// zombie.
struct ProcessCpu {
  double cpu_ns = 0;
  double start_ns = 0;
};
std::optional<ProcessCpu> process_cpu(std::uint32_t pid, const std::string& proc_root = "/proc");

}  // namespace eacgm
