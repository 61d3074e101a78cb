// One thread's Python stack read from user space, for a thread the sampler never sees: one
// blocked off the CPU in a traced waiting call (a collective, a synchronisation). It finds
// the thread's PyThreadState in the runtime's interpreter and thread lists and walks its
// frames as bpf/py_sample.bpf.c does (the same layout fields, frame-owner and code-type
// checks, depth cap and flags), writing the sampler's own record, which PythonStackDecoder
// names: one decoding path for sampled and read stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "bpf/py_sample.h"

namespace eacgm::ingest {

// Reads `len` bytes at `addr` of one process into `out`; false when any cannot be read.
using RemoteRead = std::function<bool(std::uint64_t addr, void* out, std::size_t len)>;

// The reader of a live process (process_vm_readv, else /proc/<pid>/mem).
RemoteRead live_process_memory(std::uint32_t pid);

enum class ThreadStackStatus {
  kRead,        // the record holds the stack (EACGM_PY_TRUNCATED, EACGM_PY_READ_FAULT as the walk found)
  kNoThread,    // no thread state of the process is the thread's (not a Python thread)
  kAmbiguous,   // 3.10 and older: the thread cannot be told from the others (below)
  kUnreadable,  // the runtime could not be read (the process is gone, or its memory is refused)
};

// Reads the stack of thread `tid` of process `pid`, whose interpreter `proc` describes (the
// values the sampler is given), into `out`: pid, tid, version, depth, flags and frames,
// innermost first; the caller sets ts_ns, comm and the call (EACGM_PY_IN_CALL, call_probe). CPython 3.11+
// names each thread state's kernel thread id (native_thread_id). 3.10 and older keep only pthread_self(),
// which the sampler compares with the running thread's fs base, a value user space cannot read of another
// thread: there the thread is the process's only thread state, and only when it is the main thread (tid ==
// pid); with several thread states, or a single one and another thread, kAmbiguous.
ThreadStackStatus read_thread_stack(const RemoteRead& read, const eacgm_py_proc& proc, std::uint32_t pid,
                                    std::uint32_t tid, eacgm_py_sample& out);

}  // namespace eacgm::ingest
