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
 * 2: EACGM_PY_IN_CALL and the sample's call_probe.
 * 3: each frame's code_id, from the layout's code_id_words.
 * 4: the waiting call from `calls_in_flight` (struct eacgm_call_in_flight). */
#define EACGM_PY_ABI_VERSION 4

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
	eacgm_u16 code_id_words;    /* the code object's words that make its code_id (below) */
	eacgm_u16 pad;
};

/* A code object's identity, for telling it from another one allocated later at its
 * address: bit i of the layout's code_id_words names the 4-byte word at offset 16 + 4 * i
 * of the object, each a field no running of the code changes (its counts, flags, first
 * line, bytecode length or object and constants); every word folded as FNV-1a does bytes,
 * the others as zero (no branch: the sampler runs this for every frame).
 * `words` holds the EACGM_PY_CODE_ID_WORDS words from offset 16. The sampler computes it
 * per frame, the agent from the object it reads; the two differ when the object read is not
 * the one sampled. */
#define EACGM_PY_CODE_ID_WORDS 16
static inline eacgm_u32 eacgm_py_code_id(const eacgm_u32 *words, eacgm_u16 mask)
{
	eacgm_u32 h = 2166136261u;
	for (int i = 0; i < EACGM_PY_CODE_ID_WORDS; i++)
		h = (h ^ (words[i] & (0u - ((mask >> i) & 1u)))) * 16777619u;
	return h;
}

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
			      * call: bpf/events.h struct eacgm_call_in_flight) */

struct eacgm_py_frame {
	eacgm_u64 code;    /* the code object's address */
	eacgm_u64 instr;   /* instruction pointer (3.11+) or index (3.10); 0 unknown */
	eacgm_u32 code_id; /* eacgm_py_code_id of the code object when sampled */
	eacgm_u32 pad;
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
#define EACGM_PY_SAMPLE_SIZE(depth) (EACGM_PY_SAMPLE_HEADER + 24 * (depth))

/* Counters of the sampler (a per-CPU array indexed by these). */
enum eacgm_py_counter {
	EACGM_PY_CNT_SAMPLES = 0,     /* samples of Python processes taken */
	EACGM_PY_CNT_DROPS = 1,       /* samples lost: ring buffer full */
	EACGM_PY_CNT_NO_THREAD = 2,   /* samples of threads without a Python thread state */
	EACGM_PY_CNT_THREAD_WALKS = 3,/* searches of the thread-state list (cache misses) */
	EACGM_PY_CNT_MAX = 4,
};

#endif
