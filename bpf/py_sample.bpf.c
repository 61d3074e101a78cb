// SPDX-License-Identifier: GPL-2.0
/* The Python stack sampler: a perf_event program on each CPU's software clock. When the
 * thread on the CPU belongs to a Python process the agent registered, it finds that
 * thread's PyThreadState and walks its frame chain, and sends the code objects (and where
 * each frame is in its code) to user space, which names them. Python-to-Python calls run
 * inline in the eval loop on CPython 3.11+, so probes on the interpreter's entry miss
 * them; the frame chain has them all. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "py_sample.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 py_abi_version = EACGM_PY_ABI_VERSION;

/* Python processes (tgid -> where to read them); written by the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct eacgm_py_proc);
} py_procs SEC(".maps");

/* Each thread's PyThreadState, once found (checked against the thread at every use, so
 * a stale entry costs one search). 0: no thread state; searched again after a while. */
struct thread_entry {
	__u64 tstate;
	__u32 misses; /* samples since the last search found nothing */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct thread_entry);
} py_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by the agent before load */
} py_samples SEC(".maps");

/* The traced call each thread waits in: the tracer's map (bpf/trace.bpf.c), shared by
 * the agent before load; without a tracer, an empty one of its own. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EACGM_CALLS_IN_FLIGHT_MAX);
	__type(key, __u32);
	__type(value, struct eacgm_call_in_flight);
} calls_in_flight SEC(".maps");

/* Where a sample is built: it is larger than the 512-byte stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct eacgm_py_sample);
} py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EACGM_PY_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} py_counters SEC(".maps");

/* The fs base of a thread is its pthread_self() on x86-64 (glibc and musl point %fs at
 * the thread's control block), which CPython stores as PyThreadState.thread_id. */
struct thread_struct {
	unsigned long fsbase;
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_struct thread;
	struct task_struct *group_leader;
	char comm[16];
} __attribute__((preserve_access_index));

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&py_counters, &which);
	if (c)
		*c += 1;
}

static __always_inline __u64 read_ptr(__u64 addr)
{
	__u64 v = 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* The traced call the current thread is inside, if any: a mark of its waiting call whose
 * entry stack pointer is above the thread's user stack pointer now (from its saved user
 * registers, also when the sample interrupted it in the kernel). A mark left by a
 * return never seen fails this once the thread has left that frame. */
static __always_inline int waiting_call(__u32 *probe_id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct eacgm_call_in_flight *w = bpf_map_lookup_elem(&calls_in_flight, &tid);
	if (!w || !w->sp)
		return 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 sp = 0;
	if (!regs || bpf_probe_read_kernel(&sp, sizeof(sp), &regs->rsp) || sp >= w->sp)
		return 0;
	*probe_id = w->probe_id;
	return 1;
}

/* Whether `tstate` is the thread state of the running thread. */
static __always_inline int is_this_thread(const struct eacgm_py_layout *l, __u64 tstate, __u32 tid,
					  __u64 fsbase)
{
	if (l->tstate_native_id != EACGM_PY_NO_FIELD)
		return read_ptr(tstate + l->tstate_native_id) == tid;
	return fsbase != 0 && read_ptr(tstate + l->tstate_thread_id) == fsbase;
}

/* The walks below run under bpf_loop (Linux 5.17+): the verifier checks one step, not
 * every unrolled iteration, which keeps the program far below its complexity limit. */

/* Searching every interpreter's thread list for the running thread's state: each step
 * looks at one thread state, or moves on to the next interpreter's list. */
struct thread_search {
	struct eacgm_py_layout l;
	__u64 interp;
	__u64 tstate;
	__u64 found;
	__u64 fsbase;
	__u32 tid;
	__u32 started;
};

static long thread_search_step(__u32 i, void *arg)
{
	struct thread_search *c = arg;
	if (!c->tstate) {
		if (c->started)
			c->interp = read_ptr(c->interp + c->l.interp_next);
		c->started = 1;
		if (!c->interp)
			return 1;
		c->tstate = read_ptr(c->interp + c->l.threads_head);
		return 0;
	}
	if (is_this_thread(&c->l, c->tstate, c->tid, c->fsbase)) {
		c->found = c->tstate;
		return 1;
	}
	c->tstate = read_ptr(c->tstate + c->l.tstate_next);
	return 0;
}

static __always_inline __u64 find_tstate(const struct eacgm_py_proc *p, __u32 tid, __u64 fsbase)
{
	struct thread_search c = {};
	c.l = p->layout;
	c.interp = read_ptr(p->runtime + p->layout.interp_head);
	c.fsbase = fsbase;
	c.tid = tid;
	bpf_loop(EACGM_PY_MAX_INTERPS * (EACGM_PY_MAX_THREADS + 1), thread_search_step, &c, 0);
	return c.found;
}

/* The running thread's PyThreadState, through the cache; 0 when it has none. */
static __always_inline __u64 current_tstate(const struct eacgm_py_proc *p, __u32 tid)
{
	const struct eacgm_py_layout *l = &p->layout;
	__u64 fsbase = 0;
	if (l->tstate_native_id == EACGM_PY_NO_FIELD) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		fsbase = BPF_CORE_READ(task, thread.fsbase);
	}
	struct thread_entry *e = bpf_map_lookup_elem(&py_threads, &tid);
	if (e && e->tstate && is_this_thread(l, e->tstate, tid, fsbase))
		return e->tstate;
	/* A thread known to have no state is searched again every 16th sample: it may
	 * become a Python thread later (PyGILState_Ensure from a C thread). */
	if (e && !e->tstate && (++e->misses & 15))
		return 0;
	count(EACGM_PY_CNT_THREAD_WALKS);
	struct thread_entry found = {};
	found.tstate = find_tstate(p, tid, fsbase);
	bpf_map_update_elem(&py_threads, &tid, &found, BPF_ANY);
	return found.tstate;
}

/* Walking the frame chain, innermost first: each step records one frame (unless it is
 * not a Python function's) and moves to its caller. */
struct frame_walk {
	struct eacgm_py_layout l;
	__u64 code_type;
	__u64 frame;
	__u32 depth;
	__u32 flags;
};

static long frame_walk_step(__u32 i, void *arg)
{
	struct frame_walk *w = arg;
	if (!w->frame || w->depth >= EACGM_PY_MAX_DEPTH)
		return 1;
	__u32 zero = 0;
	struct eacgm_py_sample *s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return 1;
	__u64 frame = w->frame;
	__u64 code = read_ptr(frame + w->l.frame_code);
	__u8 owner = 0;
	if (w->l.frame_owner != EACGM_PY_NO_FIELD &&
	    bpf_probe_read_user(&owner, sizeof(owner), (void *)(frame + w->l.frame_owner)))
		owner = EACGM_PY_OWNED_BY_CSTACK; /* unreadable: not a frame to report */
	/* C entry frames (3.12+) and anything whose executable is not a code object (3.13
	 * keeps None there for some frames) are not Python functions. */
	/* ob_type, then the words that make the code's identity. */
	__u32 obj[2 + EACGM_PY_CODE_ID_WORDS];
	if (code && owner != EACGM_PY_OWNED_BY_CSTACK &&
	    bpf_probe_read_user(obj, sizeof(obj), (void *)(code + 8)) == 0 &&
	    (obj[0] | (__u64)obj[1] << 32) == w->code_type) {
		__u64 instr = 0;
		if (w->l.instr_is_index) {
			__s32 lasti = 0;
			if (bpf_probe_read_user(&lasti, sizeof(lasti), (void *)(frame + w->l.frame_instr)) == 0 &&
			    lasti >= 0)
				instr = (__u64)lasti;
		} else {
			instr = read_ptr(frame + w->l.frame_instr);
		}
		__u32 d = w->depth & (EACGM_PY_MAX_DEPTH - 1);
		s->frames[d].code = code;
		s->frames[d].instr = instr;
		s->frames[d].code_id = eacgm_py_code_id(&obj[2], w->l.code_id_words);
		w->depth++;
	}
	__u64 prev = 0;
	if (bpf_probe_read_user(&prev, sizeof(prev), (void *)(frame + w->l.frame_previous))) {
		w->flags |= EACGM_PY_READ_FAULT;
		prev = 0;
	}
	w->frame = prev;
	return 0;
}

SEC("perf_event")
int eacgm_py_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	const struct eacgm_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p)
		return 0;
	count(EACGM_PY_CNT_SAMPLES);
	__u32 zero = 0;
	struct eacgm_py_sample *s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return 0;
	s->ts_ns = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = tid;
	s->depth = 0;
	s->flags = 0;
	s->version = p->layout.version;
	s->pad = 0;
	s->call_probe = 0;
	s->pad2 = 0;
	/* The process's name (its main thread's), not the sampled thread's. */
	struct task_struct *leader = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), group_leader);
	if (!leader || bpf_probe_read_kernel_str(s->comm, sizeof(s->comm), &leader->comm) < 0)
		bpf_get_current_comm(s->comm, sizeof(s->comm));
	if (waiting_call(&s->call_probe))
		s->flags |= EACGM_PY_IN_CALL;

	const struct eacgm_py_layout *l = &p->layout;
	__u64 tstate = current_tstate(p, tid);
	__u64 frame = 0;
	if (!tstate) {
		s->flags |= EACGM_PY_NO_THREAD;
		count(EACGM_PY_CNT_NO_THREAD);
	} else {
		frame = read_ptr(tstate + l->tstate_frame);
		if (l->cframe_frame != EACGM_PY_NO_FIELD && frame)
			frame = read_ptr(frame + l->cframe_frame);
	}
	struct frame_walk w = {};
	w.l = *l;
	w.code_type = p->code_type;
	w.frame = frame;
	/* Room for C entry frames (3.12+: one per call from C), which are skipped. */
	bpf_loop(2 * EACGM_PY_MAX_DEPTH, frame_walk_step, &w, 0);
	if (w.frame)
		s->flags |= EACGM_PY_TRUNCATED;
	s->flags |= w.flags;
	__u32 depth = w.depth;
	if (depth > EACGM_PY_MAX_DEPTH)
		depth = EACGM_PY_MAX_DEPTH;
	s->depth = depth;
	__u64 size = EACGM_PY_SAMPLE_SIZE(depth);
	if (size > sizeof(*s))
		size = sizeof(*s);
	/* The reader is woken when it has caught up (the ring's adaptive wakeup: at most once
	 * per sample, fewer under load): a code object is named by reading it from the process,
	 * and one freed meanwhile (a module body run once at import) cannot be named, or
	 * another code object at its address would be read instead. Waiting for the reader's
	 * poll timeout (100 ms) lost nearly every module body of an import-heavy start-up. */
	if (bpf_ringbuf_output(&py_samples, s, size, 0))
		count(EACGM_PY_CNT_DROPS);
	return 0;
}
