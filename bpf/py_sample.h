/* The kernel/user boundary of the Python stack sampler (bpf/py_sample.bpf.c): what the
 * agent tells the sampler about each Python process, and the stack record it sends back.
 * Fixed-width types only; src/probe/py_sampler.cpp pins sizes with static_asserts. */
#ifndef EACGM_BPF_PY_SAMPLE_H
#define EACGM_BPF_PY_SAMPLE_H

#include "events.h"

#define EACGM_PY_MAX_DEPTH 64      /* frames walked per sample (innermost first) */
#define EACGM_PY_MAX_THREADS 64    /* thread states searched per interpreter */
#define EACGM_PY_MAX_INTERPS 4     /* interpreters searched (the main one and subinterpreters) */
#define EACGM_PY_NO_FIELD 0xffff   /* a layout field this version lacks */
#define EACGM_PY_OWNED_BY_CSTACK 3 /* _PyInterpreterFrame.owner of C entry frames (3.12+) */
/* Version of this boundary; the object carries it as `py_abi_version`.
 * 2: EACGM_PY_IN_CALL and the sample's call_probe. */
#define EACGM_PY_ABI_VERSION 2

/* Where the sampler finds a thread's Python stack, in bytes (src/probe/python_stack_layouts.cpp
 * says where each number comes from). */
struct eacgm_py_layout {
	eacgm_u16 interp_head;      /* _PyRuntimeState.interpreters.head */
	eacgm_u16 interp_next;      /* PyInterpreterState.next */
	eacgm_u16 threads_head;     /* PyInterpreterState.threads.head (tstate_head in 3.10) */
	eacgm_u16 tstate_next;      /* PyThreadState.next */
	eacgm_u16 tstate_thread_id; /* PyThreadState.thread_id: pthread_self(), the fs base on x86-64 */
	eacgm_u16 tstate_native_id; /* PyThreadState.native_thread_id (3.11+); NO_FIELD: match thread_id */
	eacgm_u16 tstate_frame;     /* frame (3.10), cframe (3.11, 3.12), current_frame (3.13) */
	eacgm_u16 cframe_frame;     /* _PyCFrame.current_frame (3.11, 3.12); NO_FIELD elsewhere */
	eacgm_u16 frame_previous;   /* f_back (3.10) or previous */
	eacgm_u16 frame_code;       /* f_code, f_executable (3.13) */
	eacgm_u16 frame_owner;      /* owner (3.11+); NO_FIELD in 3.10 */
	eacgm_u16 frame_instr;      /* f_lasti, an int (3.10); prev_instr / instr_ptr, a pointer */
	eacgm_u16 instr_is_index;   /* 1: frame_instr is a 32-bit instruction index (3.10) */
	eacgm_u16 version;          /* major << 8 | minor, copied into each sample */
	eacgm_u16 pad[2];
};

/* One Python process: where its runtime state lives, how to read it. */
struct eacgm_py_proc {
	eacgm_u64 runtime;   /* address of _PyRuntime in the process */
	eacgm_u64 code_type; /* address of PyCode_Type: frames whose code is something else are skipped */
	struct eacgm_py_layout layout;
};

/* Sample flags. */
#define EACGM_PY_TRUNCATED 0x1 /* the stack was deeper than EACGM_PY_MAX_DEPTH */
#define EACGM_PY_NO_THREAD 0x2 /* the thread has no Python thread state (not a Python thread) */
#define EACGM_PY_READ_FAULT 0x4 /* a read failed mid-walk: the stack ends early */
#define EACGM_PY_IN_CALL 0x8 /* the thread was inside the traced call call_probe (a waiting
			      * call: bpf/events.h struct eacgm_waiting_call) */

struct eacgm_py_frame {
	eacgm_u64 code;  /* the code object's address */
	eacgm_u64 instr; /* instruction pointer (3.11+) or index (3.10); 0 unknown */
};

/* One sample of an on-CPU thread of a Python process; sent only as far as `depth`
 * frames reach (EACGM_PY_SAMPLE_SIZE(depth) bytes). */
struct eacgm_py_sample {
	eacgm_u64 ts_ns;
	eacgm_u32 pid;
	eacgm_u32 tid;
	eacgm_u16 depth; /* frames[0..depth): innermost first */
	eacgm_u16 flags; /* EACGM_PY_* */
	eacgm_u16 version; /* the interpreter's, major << 8 | minor: how to read its code objects */
	eacgm_u16 pad;
	char comm[EACGM_COMM_LEN]; /* the process's (its main thread's) */
	eacgm_u32 call_probe; /* with EACGM_PY_IN_CALL: the probe id of the call */
	eacgm_u32 pad2;
	struct eacgm_py_frame frames[EACGM_PY_MAX_DEPTH];
};

#define EACGM_PY_SAMPLE_HEADER 48
#define EACGM_PY_SAMPLE_SIZE(depth) (EACGM_PY_SAMPLE_HEADER + 16 * (depth))

/* Counters of the sampler (a per-CPU array indexed by these). */
enum eacgm_py_counter {
	EACGM_PY_CNT_SAMPLES = 0,     /* samples of Python processes taken */
	EACGM_PY_CNT_DROPS = 1,       /* samples lost: ring buffer full */
	EACGM_PY_CNT_NO_THREAD = 2,   /* samples of threads without a Python thread state */
	EACGM_PY_CNT_THREAD_WALKS = 3,/* searches of the thread-state list (cache misses) */
	EACGM_PY_CNT_MAX = 4,
};

#endif
