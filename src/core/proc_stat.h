// /proc/<pid>/stat, read once for everyone who asks about a process's state or parent:
// the process tree (sample), the agent's end condition, the memory ledger's exits; and
// the two tests of a process's end, alive (not a zombie) and exists (until reaped).
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

// Whether a process is alive: /proc/<pid>/stat exists and its state is neither a zombie
// ('Z') nor dead ('X'). A zombie has exited (its memory, GPU contexts and handles are gone)
// and only waits for its parent: the traced process has ended, its allocations are over.
bool process_alive(std::uint32_t pid);

// Whether `pid` still names a process, a zombie included (kill(pid, 0) fails with ESRCH
// only once it is reaped): for state that records still in flight may need until then
// (the enrichers' names, the GPU-time rings), on paths that run every reader round, where
// a system call costs a tenth of process_alive's read of /proc.
bool process_exists(std::uint32_t pid);

// A process's CPU time (all its threads, user and system) in nanoseconds, at the clock
// tick's resolution, and when it started (ns since boot); nullopt when it is gone or a
// zombie.
struct ProcessCpu {
  double cpu_ns = 0;
  double start_ns = 0;
};
std::optional<ProcessCpu> process_cpu(std::uint32_t pid, const std::string& proc_root = "/proc");

}  // namespace eacgm
