// The calling thread's kernel thread id, asked of the kernel once per thread: a system call
// each time cost every timed launch (and every counted memory call) a few hundred
// nanoseconds. The child of a fork is a new thread of a new process: it asks again.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace eacgm::govern::hook {

inline thread_local std::uint32_t t_thread_id = 0;

inline std::uint32_t thread_id() {
  if (t_thread_id == 0) t_thread_id = static_cast<std::uint32_t>(syscall(SYS_gettid));
  return t_thread_id;
}

// In the child of a fork (its one thread inherited the parent thread's cached id).
inline void forget_thread_id() { t_thread_id = 0; }

}  // namespace eacgm::govern::hook
