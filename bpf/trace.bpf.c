// SPDX-License-Identifier: GPL-2.0
/* Generic spec-driven uprobe programs: one entry and one exit program serve every
 * probe. The attach cookie names the probe; its argument layout lives in `probes`.
 * Entry and exit are paired here, per thread and probe, so user space gets one
 * fixed-size record per call. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"

char LICENSE[] SEC("license") = "GPL";

/* Filled by the agent before load. */
const volatile __u32 filter_pids = 0; /* 1: trace only tgids in target_pids */
const volatile __u32 self_tgid = 0;   /* never trace the agent itself */
const volatile __u64 wakeup_bytes = 0; /* wake the reader only past this much data */
const volatile __u32 stop_on_load = 0;  /* 1: stop a traced process at each loader hint */
const volatile __u32 filter_cgroup = 0; /* 1: trace only tasks under scope_cgroup's entry */
const volatile __u32 track_in_flight = 1; /* 0: waiting calls leave calls_in_flight alone ([hangs] in_flight) */

/* The record ABI this object was built for (bpf/events.h); the agent refuses to load an
 * object whose value differs from the one it was compiled with. */
const volatile __u32 abi_version = EACGM_ABI_VERSION;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EACGM_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct eacgm_probe);
} probes SEC(".maps");

/* The duty cycle's window (src/agent/duty_cycle.h): [0] is EACGM_DUTY_OPEN while cycled
 * probes (EACGM_PROBE_CYCLED) count. The agent opens it once they are all attached and
 * closes it before detaching them, so their counts cover exactly the time it logged, not
 * the milliseconds in which the kernel registers or removes them one by one (then it is
 * EACGM_DUTY_SWITCHING, and the other probes' calls are counted as made then). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2); /* [1]: the moves so far (bpf/events.h) */
	__type(key, __u32);
	__type(value, __u32);
} duty_window SEC(".maps");

/* Each thread's last call of a probe that is not cycled, while the duty cycle runs: when,
 * and the window's state and moves then (the pace's gaps, struct eacgm_count_value). */
struct pace_mark {
	__u64 ts;
	__u32 moves;
	__u32 state;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pace_mark);
} pace_marks SEC(".maps");

/* When processes ended (their main thread's exit, bpf_ktime_get_ns): the duty cycle
 * scales a process's counts only over the part of an interval it lived. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} process_exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the agent before load */
} events SEC(".maps");

/* The kernel's task, as far as read here (CO-RE). sched_info (CONFIG_SCHED_INFO) keeps
 * run_delay: the ns the task has spent runnable on a run queue, waiting for a CPU (after
 * a wake-up, or preempted), updated each time it gets one, so it does not move while the
 * task runs a probe. */
struct sched_info {
	unsigned long long run_delay;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	struct sched_info sched_info;
} __attribute__((preserve_access_index));

/* The task's run delay so far, 0 where the kernel has no sched_info (the record's
 * EACGM_REC_RUN_DELAY is then left clear). */
static __always_inline __u64 task_run_delay(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->sched_info))
		return 0;
	return task->sched_info.run_delay;
}

/* A timed counted call's session cookie: its entry's time (mod 2^44 ns, about 4.9 h) and
 * its thread's run delay then (in 1,024 ns units, mod 2^20: about 1.07 s), so that the
 * return tells the call's waits for a CPU from its own time without a map. Never 0 (not
 * timed) nor EACGM_CAPTURE_COOKIE. */
#define EACGM_COOKIE_TS_BITS 44
#define EACGM_COOKIE_DELAY_BITS 20
#define EACGM_COOKIE_DELAY_SHIFT 10

static __always_inline __u64 timing_cookie(__u64 now, __u64 delay)
{
	__u64 c = (now << EACGM_COOKIE_DELAY_BITS) |
		  ((delay >> EACGM_COOKIE_DELAY_SHIFT) & ((1ULL << EACGM_COOKIE_DELAY_BITS) - 1));
	if (c == 0)
		return 1;
	return c == EACGM_CAPTURE_COOKIE ? c - 1 : c;
}

/* Per-thread state, in task-local storage (no hash map on the hot path): the calls
 * this thread has entered and not yet left (innermost last), and how many `outer`
 * calls are open (what makes other records nested). */
struct thread_calls {
	__u32 open;    /* slots in use */
	__u32 depth;   /* open EACGM_PROBE_OUTER calls */
	__u32 dropped; /* entries seen and not stored (too deep) whose exits are to come */
	__u32 pad;
	__u64 entry_delay[EACGM_MAX_INFLIGHT]; /* each slot's task_run_delay() at its entry */
	struct eacgm_record slot[EACGM_MAX_INFLIGHT];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_calls);
} thread_state SEC(".maps");

/* The waiting call each thread is in, by thread id (struct eacgm_call_in_flight,
 * bpf/events.h): the agent lists the threads stuck in one, and the Python stack sampler,
 * which reuses this map, ends their stacks in it. Preallocated; an entry per thread that
 * has made a waiting call, sp and ts_ns 0 while it is in none. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EACGM_CALLS_IN_FLIGHT_MAX);
	__type(key, __u32);
	__type(value, struct eacgm_call_in_flight);
} calls_in_flight SEC(".maps");

/* Scratch for building entry-only records off the 512-byte stack (calls with an exit
 * are built in their thread's task storage). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct eacgm_record);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_pids SEC(".maps");

/* The cgroup v2 subtree the trace is limited to ([trace] cgroup): entry 0. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope_cgroup SEC(".maps");

/* Processes under an on-demand capture: their calls of counted probes are recorded per
 * call (entry and return paired as for per-call probes) instead of counted, so each call
 * is seen exactly once, in one of the two ways. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EACGM_MAX_CAPTURES);
	__type(key, __u32);
	__type(value, __u8);
} capture_pids SEC(".maps");

/* Processes with CUDA stream captures open: how many (EACGM_PROBE_CAPTURE_BEGIN, _END).
 * While a process has one, its calls of counted probes are recorded per call like a
 * captured process's, so that the work made on a capturing stream is seen going into its
 * graph. An entry stays at 0 when its captures end (deleting it could lose another
 * thread's opening in between) and goes with the process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EACGM_MAX_CAPTURING);
	__type(key, __u32);
	__type(value, __s64);
} capturing SEC(".maps");

/* Stream captures open machine-wide (the sum of `capturing`): the counted probes'
 * entries look a process up only while some capture is open, so a count costs one load
 * more, not a hash lookup. */
__s64 captures_open = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EACGM_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Entries of each probe (by probe id), traced process or not, while it is enabled. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EACGM_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} probe_hits SEC(".maps");

/* Always-on counts and sampled durations (struct eacgm_count_key, eacgm_duration_key);
 * sized by the agent before load. Allocated as keys appear. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, struct eacgm_count_key);
	__type(value, struct eacgm_count_value);
} call_counts SEC(".maps");

/* Where a call is counted when `call_counts` cannot take its key: its keys are allocated
 * as they appear, from small per-CPU caches that the kernel refills after the program
 * returns (a few elements each), so a CPU on which short processes make their first
 * calls one after another finds the cache empty at times, and a map full until the
 * reader deletes the keys of exited processes refuses them too. This one is allocated
 * at load (an update never waits for memory) and shared by the CPUs: added to
 * atomically. The reader adds it to `call_counts` key by key. Sized by the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct eacgm_count_key);
	__type(value, struct eacgm_count_value);
} call_counts_spill SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, struct eacgm_duration_key);
	__type(value, struct eacgm_duration_value);
} call_durations SEC(".maps");

/* Session programs (Linux 6.13+ uprobe sessions): the kernel runs the program at entry
 * and, when the entry returned 0, again at return, with an 8-byte cookie shared between
 * the two. Weak, so kernels without them still load the rest of the object. */
extern _Bool bpf_session_is_return(void) __ksym __weak;
extern __u64 *bpf_session_cookie(void) __ksym __weak;

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		*c += 1;
}

static __always_inline int traced(__u32 tgid)
{
	if (tgid == self_tgid)
		return 0;
	/* Every caller runs in the task it asks about. */
	if (filter_cgroup && bpf_current_task_under_cgroup(&scope_cgroup, 0) != 1)
		return 0;
	if (!filter_pids)
		return 1;
	return bpf_map_lookup_elem(&target_pids, &tgid) != NULL;
}

/* A stream capture opens in process `tgid` (the entry of an EACGM_PROBE_CAPTURE_BEGIN
 * call, before the capture exists: no call on the capturing stream comes earlier). */
static __always_inline void open_capture(__u32 tgid)
{
	__s64 *n = bpf_map_lookup_elem(&capturing, &tgid);
	if (!n) {
		__s64 zero = 0;
		bpf_map_update_elem(&capturing, &tgid, &zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&capturing, &tgid);
		if (!n)
			return; /* full: this process's capture is counted, not recorded */
	}
	__sync_fetch_and_add(n, 1);
	__sync_fetch_and_add(&captures_open, 1);
}

/* A stream capture closes (an end's return, a failed begin's return). An end whose
 * begin was not seen (made before the probes were attached) has nothing to close. */
static __always_inline void close_capture(__u32 tgid)
{
	__s64 *n = bpf_map_lookup_elem(&capturing, &tgid);
	if (!n)
		return;
	if (__sync_fetch_and_add(n, -1) <= 0) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	__sync_fetch_and_add(&captures_open, -1);
}

static __always_inline int in_capture(__u32 tgid)
{
	if (*(volatile __s64 *)&captures_open <= 0)
		return 0;
	__s64 *n = bpf_map_lookup_elem(&capturing, &tgid);
	return n && *n > 0;
}

/* The entry of an EACGM_PROBE_WAIT call: the thread waits in it from now on, unless it
 * is inside an outer waiting call already (an entry whose stack pointer is above this
 * one's), which keeps naming the wait. The call goes into the thread's entry of
 * `calls_in_flight` with what its entry captured: `r` (null: nothing), of which the
 * arguments in `read_mask` were read, `ts` its entry time, and the thread's name when
 * `named` (else the one read when the entry was made). The entry is made at the thread's
 * first waiting call and written in place at the next ones (a lookup: no allocation, no
 * bucket lock); ts_ns is written last, after a compiler barrier, so a reader that sees
 * the new time sees the rest of the call (x86 keeps stores in order), and one that sees 0
 * skips the entry. */
static __always_inline void enter_wait(struct pt_regs *ctx, __u32 probe_id, const struct eacgm_record *r,
				       __u32 read_mask, __u64 ts, int named)
{
	if (!track_in_flight)
		return;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct eacgm_call_in_flight *c = bpf_map_lookup_elem(&calls_in_flight, &tid);
	if (!c) {
		struct eacgm_call_in_flight first;
		__builtin_memset(&first, 0, sizeof(first));
		bpf_get_current_comm(first.comm, sizeof(first.comm));
		bpf_map_update_elem(&calls_in_flight, &tid, &first, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&calls_in_flight, &tid);
		if (!c) {
			count(EACGM_CNT_IN_FLIGHT_FULL);
			return;
		}
	}
	__u64 sp = PT_REGS_SP(ctx);
	if (c->sp > sp)
		return;
	c->ts_ns = 0;
	asm volatile("" ::: "memory");
	c->sp = sp;
	c->pid = id >> 32;
	c->tid = tid;
	c->probe_id = probe_id;
	if (r) {
		c->nargs = r->nargs;
		c->read_mask = (__u8)read_mask;
		c->fault_mask = r->fault_mask & (__u8)read_mask;
		__builtin_memcpy(c->args, r->args, sizeof(c->args));
		if (named)
			__builtin_memcpy(c->comm, r->comm, sizeof(c->comm));
	} else {
		c->nargs = 0;
		c->read_mask = 0;
		c->fault_mask = 0;
	}
	asm volatile("" ::: "memory");
	c->ts_ns = ts;
}

/* The return of an EACGM_PROBE_WAIT call (its stack pointer is the entry's + 8, past the
 * return address): ends the wait it began, not an outer call's. */
static __always_inline void leave_wait(struct pt_regs *ctx)
{
	if (!track_in_flight)
		return;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct eacgm_call_in_flight *c = bpf_map_lookup_elem(&calls_in_flight, &tid);
	if (c && c->sp + 8 == PT_REGS_SP(ctx)) {
		c->ts_ns = 0;
		c->sp = 0;
	}
}

/* The general registers, copied once: indexing pt_regs with a variable offset is
 * rejected by the verifier ("dereference of modified ctx ptr"). Slots follow enum
 * eacgm_reg: the six argument registers first, so REG index n is slot n. */
struct arg_regs {
	__u64 r[EACGM_REG_COUNT];
	/* Stack argument words [stack_first, stack_first + stack_count), read at once at
	 * entry (eacgm_count.stack_words); stack_count 0: none read, each is read alone. */
	__u64 stack[EACGM_STACK_WORDS];
	__u32 stack_first;
	__u32 stack_count;
};

static __always_inline void load_regs(struct pt_regs *ctx, struct arg_regs *regs)
{
	regs->r[EACGM_REG_RDI] = ctx->rdi;
	regs->r[EACGM_REG_RSI] = ctx->rsi;
	regs->r[EACGM_REG_RDX] = ctx->rdx;
	regs->r[EACGM_REG_RCX] = ctx->rcx;
	regs->r[EACGM_REG_R8] = ctx->r8;
	regs->r[EACGM_REG_R9] = ctx->r9;
	regs->r[EACGM_REG_RAX] = ctx->rax;
	regs->r[EACGM_REG_RBX] = ctx->rbx;
	regs->r[EACGM_REG_RBP] = ctx->rbp;
	regs->r[EACGM_REG_RSP] = ctx->rsp;
	regs->r[EACGM_REG_R10] = ctx->r10;
	regs->r[EACGM_REG_R11] = ctx->r11;
	regs->r[EACGM_REG_R12] = ctx->r12;
	regs->r[EACGM_REG_R13] = ctx->r13;
	regs->r[EACGM_REG_R14] = ctx->r14;
	regs->r[EACGM_REG_R15] = ctx->r15;
	regs->stack_count = 0;
}

/* Reads the stack argument words a probe's entry needs in one read (one user read costs
 * less than several narrow ones); on a fault each is read alone later. */
static __always_inline void load_stack(struct arg_regs *regs, const struct eacgm_probe *p)
{
	__u32 first = p->count.stack_words & 0xf, n = p->count.stack_words >> 4;
	if (n == 0 || first + n > EACGM_STACK_WORDS)
		return;
	/* n * 8, in a form whose bounds the verifier follows (8 to 64 bytes). */
	__u32 size = ((n - 1) & (EACGM_STACK_WORDS - 1)) * 8 + 8;
	/* At entry rsp points at the return address; stack arguments follow. */
	__u64 addr = regs->r[EACGM_REG_RSP] + 8 * ((__u64)first + 1);
	if (bpf_probe_read_user(regs->stack, size, (void *)addr))
		return;
	regs->stack_first = first;
	regs->stack_count = n;
}

static __always_inline __u64 reg_arg(const struct arg_regs *regs, __u32 index)
{
	return regs->r[index & (EACGM_REG_COUNT - 1)];
}

/* The raw word of argument i at entry; 0 and a fault bit when unreadable. */
static __always_inline int load_word(const struct arg_regs *regs, const struct eacgm_record *r,
				     __u32 i, const struct eacgm_arg_spec *a, __u64 *out)
{
	if (a->source == EACGM_SRC_REG || a->source == EACGM_SRC_PTREG) {
		*out = reg_arg(regs, a->index);
		return 0;
	}
	if (a->source == EACGM_SRC_STACK) {
		__u32 k = (__u32)a->index - regs->stack_first;
		if (a->index >= regs->stack_first && k < regs->stack_count) {
			*out = regs->stack[k & (EACGM_STACK_WORDS - 1)];
			return 0;
		}
		/* At entry rsp points at the return address; stack arguments follow. */
		__u64 addr = regs->r[EACGM_REG_RSP] + 8 * ((__u64)a->index + 1);
		return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
	}
	if (a->source == EACGM_SRC_PTREG_MEM) {
		/* Narrower operands are cut down by their kind (u32, u16, u8). */
		__u64 addr = reg_arg(regs, a->index) + (__s64)a->disp;
		return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
	}
	if (a->source == EACGM_SRC_ARG) {
		/* A pointer chain: what an earlier argument captured (already resolved, as
		 * arguments are captured in order); its fault is this argument's too. */
		__u32 j = a->index;
		*out = 0;
		if (j >= i || j >= EACGM_MAX_ARGS || (r->fault_mask >> j) & 1)
			return -1;
		*out = r->args[j & (EACGM_MAX_ARGS - 1)];
		return 0;
	}
	*out = 0;
	return 0;
}

/* Turns a captured word into the recorded value (dereferences, dim3, strings). */
static __always_inline void resolve_arg(const struct arg_regs *regs, struct eacgm_record *r, __u32 i,
					const struct eacgm_arg_spec *a, __u64 word)
{
	int err = 0;
	__u64 addr = word + a->deref_offset; /* deref kinds: a field behind the pointer */
	switch (a->kind) {
	case EACGM_KIND_RAW:
		r->args[i] = word;
		break;
	case EACGM_KIND_U32:
		r->args[i] = (__u32)word;
		break;
	case EACGM_KIND_U16:
		r->args[i] = (__u16)word;
		break;
	case EACGM_KIND_U8:
		r->args[i] = (__u8)word;
		break;
	case EACGM_KIND_DEREF_U32: {
		__u32 v = 0;
		err = bpf_probe_read_user(&v, sizeof(v), (void *)addr);
		r->args[i] = v;
		break;
	}
	case EACGM_KIND_DEREF_U64: {
		__u64 v = 0;
		err = bpf_probe_read_user(&v, sizeof(v), (void *)addr);
		r->args[i] = v;
		break;
	}
	case EACGM_KIND_DIM3:
		r->args[i] = word;
		if (a->source == EACGM_SRC_REG) {
			r->ext[i] = (__u32)reg_arg(regs, a->index + 1);
		} else {
			struct eacgm_arg_spec next = *a;
			__u64 z = 0;
			next.index += 1;
			err = load_word(regs, r, i, &next, &z);
			r->ext[i] = (__u32)z;
		}
		break;
	case EACGM_KIND_DEREF_DIM3: {
		__u32 v[3] = {};
		err = bpf_probe_read_user(v, sizeof(v), (void *)addr);
		r->args[i] = (__u64)v[0] | ((__u64)v[1] << 32);
		r->ext[i] = v[2];
		break;
	}
	case EACGM_KIND_DIM3_SPLIT: {
		/* Integer arguments continue from r9 onto the stack (SysV), so the three
		 * u32s of cuLaunchKernel's block may straddle registers and stack. */
		__u64 yz[2] = {};
		struct eacgm_arg_spec next = *a;
		for (int k = 0; k < 2; k++) {
			if (next.source == EACGM_SRC_REG && next.index >= 5) {
				next.source = EACGM_SRC_STACK;
				next.index = 0;
			} else {
				next.index += 1;
			}
			if (load_word(regs, r, i, &next, &yz[k]))
				err = -1;
		}
		r->args[i] = (__u64)(__u32)word | ((__u64)(__u32)yz[0] << 32);
		r->ext[i] = (__u32)yz[1];
		break;
	}
	case EACGM_KIND_STRING: {
		long n;
		if (a->flags & EACGM_ARG_STR2) {
			n = bpf_probe_read_user_str(r->str2, sizeof(r->str2), (void *)addr);
			if (n == sizeof(r->str2))
				r->flags |= EACGM_REC_STR2_TRUNC;
		} else {
			n = bpf_probe_read_user_str(r->str, sizeof(r->str), (void *)addr);
			if (n == sizeof(r->str))
				r->flags |= EACGM_REC_STR_TRUNC;
		}
		r->args[i] = word;
		if (n < 0)
			err = (int)n;
		break;
	}
	}
	if (err) {
		r->fault_mask |= 1 << i;
		count(EACGM_CNT_READ_FAULTS);
	}
}

static __always_inline void capture_args(const struct arg_regs *regs, struct eacgm_record *r,
					 const struct eacgm_probe *p, int at_exit, __u32 mask)
{
	__u32 n = p->nargs;
	for (__u32 i = 0; i < EACGM_MAX_ARGS; i++) {
		if (i >= n)
			break;
		if (!((mask >> i) & 1))
			continue;
		const struct eacgm_arg_spec *a = &p->args[i];
		int deferred = a->flags & EACGM_ARG_AT_EXIT;
		if (!at_exit) {
			__u64 word = 0;
			if (load_word(regs, r, i, a, &word)) {
				r->fault_mask |= 1 << i;
				count(EACGM_CNT_READ_FAULTS);
				continue;
			}
			if (deferred)
				r->args[i] = word; /* remember the pointer; read it at exit */
			else
				resolve_arg(regs, r, i, a, word);
		} else if (deferred) {
			resolve_arg(regs, r, i, a, r->args[i]);
		}
	}
}

/* Fills the parts of a call record known at entry; `flags` are its EACGM_REC_* so far. */
static __always_inline void open_record(struct pt_regs *ctx, struct eacgm_record *r,
					const struct eacgm_probe *p, __u64 id, __u32 probe_id,
					__u16 flags)
{
	r->type = EACGM_REC_CALL;
	r->flags = flags;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->probe_id = probe_id;
	r->nargs = p->nargs;
	r->fault_mask = 0;
	r->dur_ns = 0;
	r->run_delay_ns = 0;
	r->ret = 0;
	r->str[0] = 0;
	r->str2[0] = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	struct arg_regs regs;
	load_regs(ctx, &regs);
	load_stack(&regs, p);
	capture_args(&regs, r, p, 0, 0xff);
	r->ts_ns = bpf_ktime_get_ns();
}

/* Bytes of a record its probe fills: the string areas, last in the record, are sent
 * only by probes that capture strings. */
static __always_inline __u32 record_size(const struct eacgm_probe *p)
{
	if (p->flags & EACGM_PROBE_STR2)
		return EACGM_REC_SIZE_FULL;
	if (p->flags & EACGM_PROBE_STR)
		return EACGM_REC_SIZE_STR;
	return EACGM_REC_SIZE_NO_STR;
}

/* Sends a record. The reader is woken only when the queued data crosses a multiple of
 * wakeup_bytes: waking on every record past the threshold would cost each call an
 * irq_work while a busy reader catches up, and a crossing two producers race past
 * is caught at the next multiple (the reader's poll timeout bounds the rest). */
static __always_inline void emit(struct eacgm_record *r, __u32 size)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	__u64 before = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	if (!wakeup_bytes || (before + size) / wakeup_bytes != before / wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, r, size, flags) != 0)
		count(EACGM_CNT_RINGBUF_DROPS);
}

/* The count of `key`, made at its first call: this CPU's in `call_counts`, else (the
 * key could not be made there) the one in `call_counts_spill`, which every CPU adds to:
 * `*shared` is then 1 and the caller adds atomically. 0 when neither map has room. */
static __always_inline struct eacgm_count_value *count_value(const struct eacgm_count_key *key, int *shared)
{
	*shared = 0;
	struct eacgm_count_value *v = bpf_map_lookup_elem(&call_counts, key);
	if (v)
		return v;
	struct eacgm_count_value first = {};
	bpf_map_update_elem(&call_counts, key, &first, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&call_counts, key);
	if (v)
		return v;
	*shared = 1;
	v = bpf_map_lookup_elem(&call_counts_spill, key);
	if (!v) {
		bpf_map_update_elem(&call_counts_spill, key, &first, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&call_counts_spill, key);
	}
	count(v ? EACGM_CNT_COUNT_SPILLED : EACGM_CNT_COUNT_MAP_FULL);
	return v;
}

/* Adds `n` to a count field: plainly to this CPU's value, atomically to a shared one. */
static __always_inline void add_to(__u64 *field, __u64 n, int shared)
{
	if (shared)
		__sync_fetch_and_add(field, n);
	else
		*field += n;
}

/* A per-call probe's call counted at entry (EACGM_PROBE_TALLY) under (process, probe):
 * what the analyses count it by, whether or not its record reaches user space. 0 when
 * `call_counts` is full: its record (unflagged) then counts it. */
static __always_inline int tally(__u32 pid, __u32 probe_id)
{
	struct eacgm_count_key key = {};
	key.pid = pid;
	key.probe_id = probe_id;
	int shared;
	struct eacgm_count_value *v = count_value(&key, &shared);
	if (!v)
		return 0;
	add_to(&v->calls, 1, shared);
	return 1;
}

/* Whether a nested call's return is of no use: not where an `outer` probe keeps the
 * nesting depth, out-parameters are read, or a split return is recorded; and for a
 * waiting call, only inside an outer waiting call, which names the wait (enter_wait). */
static __always_inline int return_of_no_use(struct pt_regs *ctx, const struct eacgm_probe *p)
{
	if (p->flags & (EACGM_PROBE_OUTER | EACGM_PROBE_EXIT_ARGS | EACGM_PROBE_SPLIT))
		return 0;
	if (!(p->flags & EACGM_PROBE_WAIT))
		return 1;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct eacgm_call_in_flight *c = bpf_map_lookup_elem(&calls_in_flight, &tid);
	return c && c->sp > PT_REGS_SP(ctx);
}

/* The entry of a per-call probe. Returns 1 where the call's return is of no use (on a
 * session link the kernel then skips the return trap): an untraced process, a muted
 * probe, an entry-only probe, a call not stored, and a nested call whose probe needs
 * nothing at its return (the outer call has the duration: its record goes out now,
 * without one). Classic and uprobe_multi links ignore the value. */
static __always_inline int on_entry(struct pt_regs *ctx, int session)
{
	__u32 probe_id = (__u32)bpf_get_attach_cookie(ctx);
	const struct eacgm_probe *p = bpf_map_lookup_elem(&probes, &probe_id);
	if (!p) {
		count(EACGM_CNT_NO_PROBE);
		return 1;
	}
	/* A muted probe neither counts nor records. */
	if (!(p->flags & EACGM_PROBE_ENABLED))
		return 1;
	/* Hits count every entry of an enabled probe, before the pid filter. */
	__u64 *hits = bpf_map_lookup_elem(&probe_hits, &probe_id);
	if (hits)
		*hits += 1;

	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	/* A thread with call state was traced when it got it: no pid-filter lookup. */
	struct thread_calls *t = bpf_task_storage_get(&thread_state, task, 0, 0);
	if (!t && !traced(id >> 32))
		return 1;

	int has_exit = p->flags & EACGM_PROBE_EXIT;
	int outer = has_exit && (p->flags & EACGM_PROBE_OUTER); /* only an exit can close it */
	if (!t && has_exit)
		t = bpf_task_storage_get(&thread_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	int nested = t && t->depth > 0;
	/* Counted now, before anything can lose the record (too deep, a full ring buffer);
	 * a nested call is its outer call's. */
	__u16 flags = nested ? EACGM_REC_NESTED : 0;
	if ((p->flags & EACGM_PROBE_TALLY) && !nested && tally(id >> 32, probe_id))
		flags |= EACGM_REC_TALLIED;

	if (!has_exit || (session && nested && return_of_no_use(ctx, p))) {
		__u32 zero = 0;
		struct eacgm_record *r = bpf_map_lookup_elem(&scratch, &zero);
		if (!r)
			return 1;
		open_record(ctx, r, p, id, probe_id, flags);
		emit(r, record_size(p));
		return (p->flags & EACGM_PROBE_SPLIT) ? 0 : 1; /* a split return is a record of its own */
	}
	if (!t)
		return 1;
	__u32 n = t->open;
	if (n >= EACGM_MAX_INFLIGHT) {
		count(EACGM_CNT_TOO_DEEP);
		if (session)
			return 1; /* no return comes */
		if (t->dropped < EACGM_MAX_INFLIGHT * 64)
			t->dropped += 1; /* its exit is an orphan, not a pre-attach exit */
		return 0;
	}
	/* Built in place: the slot is the record until the exit sends it. */
	struct eacgm_record *slot = &t->slot[n & (EACGM_MAX_INFLIGHT - 1)];
	open_record(ctx, slot, p, id, probe_id, flags);
	t->entry_delay[n & (EACGM_MAX_INFLIGHT - 1)] = task_run_delay(task);
	t->open = n + 1;
	if (outer)
		t->depth += 1;
	count(EACGM_CNT_CALLS_OPENED);
	/* Once per capture: a runtime begin's nested driver call is the same one. */
	if ((p->flags & EACGM_PROBE_CAPTURE_BEGIN) && !nested)
		open_capture(id >> 32);
	if (p->flags & EACGM_PROBE_WAIT)
		enter_wait(ctx, probe_id, slot, 0xff, slot->ts_ns, 1);
	return 0;
}

/* The return of an EACGM_PROBE_SPLIT probe: a record of its own, without thread state
 * (user space pairs it with its entry by the stack pointer, so calls nest without limit). */
static __always_inline int emit_return(struct pt_regs *ctx, const struct eacgm_probe *p, __u64 id,
				       __u32 probe_id, __u64 now)
{
	__u32 zero = 0;
	if (!(p->flags & EACGM_PROBE_ENABLED))
		return 0;
	struct eacgm_record *r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	r->type = EACGM_REC_CALL;
	r->flags = EACGM_REC_HAS_EXIT;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->probe_id = probe_id;
	r->nargs = 1;
	r->fault_mask = 0;
	r->ts_ns = now;
	r->dur_ns = 0;
	r->run_delay_ns = 0;
	r->ret = (__s64)PT_REGS_RC(ctx);
	r->args[0] = PT_REGS_SP(ctx);
	r->str[0] = 0;
	r->str2[0] = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	emit(r, EACGM_REC_SIZE_NO_STR); /* no strings: the entry record carries them */
	return 0;
}

/* An exit with no stored entry. Return probes fire in every process that maps the
 * library, and only for calls entered after the return probe was attached; so it is
 * - another process's call (outside the pid filter): not this trace's business;
 * - a call of a muted probe (the entry skipped it on purpose): nothing to count;
 * - a call whose entry was seen and not stored (too deep): an orphan;
 * - otherwise the entry ran before the entry probe was attached (return probes are
 *   attached first): a call that began before the attach (--pid, a late library). */
static __always_inline int unpaired_exit(struct thread_calls *t, const struct eacgm_probe *p)
{
	if (!t && !traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (p && !(p->flags & EACGM_PROBE_ENABLED))
		return 0;
	if (t && t->dropped > 0) {
		t->dropped -= 1;
		count(EACGM_CNT_ORPHAN_EXITS);
		return 0;
	}
	count(EACGM_CNT_EXITS_BEFORE_ATTACH);
	return 0;
}

static __always_inline int on_exit(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 probe_id = (__u32)bpf_get_attach_cookie(ctx);
	const struct eacgm_probe *p = bpf_map_lookup_elem(&probes, &probe_id);
	if (p && (p->flags & EACGM_PROBE_WAIT))
		leave_wait(ctx);
	if (p && (p->flags & EACGM_PROBE_SPLIT)) {
		__u64 id = bpf_get_current_pid_tgid();
		if (!traced(id >> 32))
			return 0;
		return emit_return(ctx, p, id, probe_id, now);
	}
	/* No pid filter for paired calls: a thread has open calls only where its entries
	 * were traced. */
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 delay = task_run_delay(task);
	struct thread_calls *t = bpf_task_storage_get(&thread_state, task, 0, 0);
	if (!t || t->open == 0)
		return unpaired_exit(t, p);
	/* Normally the innermost open call; deeper ones are calls whose exits were
	 * skipped (longjmp, exceptions through C frames): those are lost exits. */
	__u32 n = t->open;
	int found = -1;
	for (int k = 1; k <= EACGM_MAX_INFLIGHT; k++) {
		if ((__u32)k > n)
			break;
		__u32 i = (n - k) & (EACGM_MAX_INFLIGHT - 1);
		if (t->slot[i].probe_id == probe_id) {
			found = (int)i;
			break;
		}
	}
	if (found < 0)
		return unpaired_exit(t, p);
	struct eacgm_record *r = &t->slot[found & (EACGM_MAX_INFLIGHT - 1)];
	for (__u32 k = (__u32)found + 1; k < EACGM_MAX_INFLIGHT && k < n; k++) {
		/* A skipped `outer` call must not leave its depth behind. */
		__u32 idx = k;
		barrier_var(idx); /* keep the bounded index: no pointer the verifier cannot bound */
		__u32 skipped_id = t->slot[idx & (EACGM_MAX_INFLIGHT - 1)].probe_id;
		const struct eacgm_probe *sp = bpf_map_lookup_elem(&probes, &skipped_id);
		if (sp && (sp->flags & EACGM_PROBE_OUTER) && t->depth > 0)
			t->depth -= 1;
		count(EACGM_CNT_LOST_EXITS);
		count(EACGM_CNT_CALLS_CLOSED);
	}
	t->open = (__u32)found;
	if (p) {
		if ((p->flags & EACGM_PROBE_OUTER) && t->depth > 0)
			t->depth -= 1;
		/* Out-parameters are read through pointers saved at entry; no registers. */
		if (p->flags & EACGM_PROBE_EXIT_ARGS) {
			struct arg_regs regs = {};
			capture_args(&regs, r, p, 1, 0xff);
		}
		/* The capture opened at the entry closes with its end, or at once if the
		 * begin failed. */
		if (!(r->flags & EACGM_REC_NESTED) &&
		    ((p->flags & EACGM_PROBE_CAPTURE_END) ||
		     ((p->flags & EACGM_PROBE_CAPTURE_BEGIN) && (__s32)PT_REGS_RC(ctx) != 0)))
			close_capture(r->pid);
	}
	count(EACGM_CNT_CALLS_CLOSED);
	/* Muted while the call was open: closed, not recorded. */
	if (p && !(p->flags & EACGM_PROBE_ENABLED))
		return 0;
	r->dur_ns = now - r->ts_ns;
	r->ret = (__s64)PT_REGS_RC(ctx);
	r->flags |= EACGM_REC_HAS_EXIT;
	if (bpf_core_field_exists(task->sched_info)) {
		/* The waits for a CPU between entry and exit: judged apart from the call's work. */
		__u64 waited = delay - t->entry_delay[found & (EACGM_MAX_INFLIGHT - 1)];
		r->run_delay_ns = waited > 0xffffffffULL ? 0xffffffffU : (__u32)waited;
		r->flags |= EACGM_REC_RUN_DELAY;
	}
	emit(r, p ? record_size(p) : EACGM_REC_SIZE_FULL);
	return 0;
}

/* Classic uprobes: one perf event per probe (any kernel with uprobe cookies). */
SEC("uprobe")
int eacgm_entry(struct pt_regs *ctx)
{
	on_entry(ctx, 0);
	return 0; /* a perf event's program that returns non-zero has its sample stored */
}

SEC("uretprobe")
int eacgm_exit(struct pt_regs *ctx)
{
	return on_exit(ctx);
}

/* uprobe_multi links (Linux 6.6+): all probes of a library in one link, so attach
 * and detach cost one system call and one RCU grace period instead of one per probe.
 * The agent sets their expected attach type before load. */
SEC("uprobe")
int eacgm_entry_multi(struct pt_regs *ctx)
{
	on_entry(ctx, 0);
	return 0;
}

SEC("uprobe")
int eacgm_exit_multi(struct pt_regs *ctx)
{
	return on_exit(ctx);
}

/* Per-call probes on a uprobe session link (Linux 6.13+; the agent sets the attach type
 * before load): the entry declines the returns it has no use for (on_entry), so an
 * untraced process and a nested driver call pay one trap, not two. */
SEC("uprobe")
int eacgm_call_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return on_exit(ctx);
	return on_entry(ctx, 1);
}

/* The gap from this thread's previous call of an uncycled probe, added to the pace's
 * sums when both fell in one stretch of the same state (open, or off); the duty cycle's
 * moves only (the window starts open and never moves without one). */
static __always_inline void add_pace_gap(struct eacgm_count_value *v, __u32 state, int shared)
{
	__u32 one = 1;
	__u32 *moves = bpf_map_lookup_elem(&duty_window, &one);
	if (!moves || *moves == 0)
		return;
	struct pace_mark *m = bpf_task_storage_get(&pace_marks, bpf_get_current_task_btf(), 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!m)
		return;
	__u64 now = bpf_ktime_get_ns();
	if (m->ts != 0 && m->moves == *moves && m->state == state && now > m->ts) {
		if (state == EACGM_DUTY_OPEN) {
			add_to(&v->in_gap_ns, now - m->ts, shared);
			add_to(&v->in_gaps, 1, shared);
		} else if (state == EACGM_DUTY_OFF) {
			add_to(&v->out_gap_ns, now - m->ts, shared);
			add_to(&v->out_gaps, 1, shared);
		}
	}
	m->ts = now;
	m->moves = *moves;
	m->state = state;
}

/* A counted probe's call in a captured process: built in the thread's call slots as a
 * per-call probe's (with the arguments the count reads), its return asked for through
 * the session cookie. Returns 0 where it could not be (no task storage, too deep, no
 * session): the call is counted instead, so it is never lost nor seen twice. */
static __always_inline int capture_entry(struct pt_regs *ctx, const struct eacgm_probe *p, __u64 id,
					 __u32 probe_id)
{
	__u64 *cookie = bpf_session_cookie();
	if (!cookie)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_calls *t =
		bpf_task_storage_get(&thread_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	__u32 n = t->open;
	if (n >= EACGM_MAX_INFLIGHT)
		return 0;
	struct eacgm_record *slot = &t->slot[n & (EACGM_MAX_INFLIGHT - 1)];
	open_record(ctx, slot, p, id, probe_id, t->depth > 0 ? EACGM_REC_NESTED : 0);
	t->entry_delay[n & (EACGM_MAX_INFLIGHT - 1)] = task_run_delay(task);
	t->open = n + 1;
	count(EACGM_CNT_CALLS_OPENED);
	*cookie = EACGM_CAPTURE_COOKIE;
	if (p->flags & EACGM_PROBE_WAIT)
		enter_wait(ctx, probe_id, slot, 0xff, slot->ts_ns, 1);
	return 1;
}

/* Always-on: one trap per call. The entry counts the call in `call_counts` under
 * (process, probe, handle) with its bytes, and asks for the return only for one call in
 * 2^sample_shift per CPU, whose duration goes into `call_durations` (and for every call
 * of a waiting probe, EACGM_PROBE_WAIT, whose return clears the thread's mark). Calls of
 * processes outside the trace decline the return at once. Nesting is not tracked: the agent
 * attaches one API layer per operation in this mode. */
static __always_inline int on_count_entry(struct pt_regs *ctx)
{
	__u32 probe_id = (__u32)bpf_get_attach_cookie(ctx);
	const struct eacgm_probe *p = bpf_map_lookup_elem(&probes, &probe_id);
	if (!p) {
		count(EACGM_CNT_NO_PROBE);
		return 1;
	}
	if (!(p->flags & EACGM_PROBE_ENABLED))
		return 1;
	__u32 zero = 0;
	__u32 *window = bpf_map_lookup_elem(&duty_window, &zero);
	__u64 in_window = window && *window == EACGM_DUTY_OPEN ? 1 : 0;
	__u64 switching = window && *window == EACGM_DUTY_SWITCHING ? 1 : 0;
	if ((p->flags & EACGM_PROBE_CYCLED) && !in_window) {
		if (switching)
			count(EACGM_CNT_SWITCH_TRAPS);
		return 1;
	}
	__u64 seen = 0;
	__u64 *hits = bpf_map_lookup_elem(&probe_hits, &probe_id);
	if (hits) {
		seen = *hits;
		*hits = seen + 1;
	}
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	if (!traced(tgid))
		return 1;
	if ((bpf_map_lookup_elem(&capture_pids, &tgid) || in_capture(tgid)) &&
	    capture_entry(ctx, p, id, probe_id))
		return 0;

	struct eacgm_count_key key = {};
	key.pid = id >> 32;
	key.probe_id = probe_id;
	__u64 bytes = 0;
	const struct eacgm_count *c = &p->count;
	struct eacgm_record *r = 0; /* the captured arguments, when the count reads some */
	if (c->handle_arg != EACGM_COUNT_NONE || c->bytes_arg != EACGM_COUNT_NONE ||
	    c->stream_arg != EACGM_COUNT_NONE) {
		__u32 zero = 0;
		r = bpf_map_lookup_elem(&scratch, &zero);
		if (!r)
			return 1;
		r->fault_mask = 0;
		struct arg_regs regs;
		load_regs(ctx, &regs);
		load_stack(&regs, p);
		capture_args(&regs, r, p, 0, c->capture_mask);
		if (c->handle_arg < EACGM_MAX_ARGS)
			key.handle = r->args[c->handle_arg & (EACGM_MAX_ARGS - 1)];
		if (c->stream_arg < EACGM_MAX_ARGS)
			key.stream = r->args[c->stream_arg & (EACGM_MAX_ARGS - 1)];
		if (c->bytes_arg < EACGM_MAX_ARGS) {
			bytes = r->args[c->bytes_arg & (EACGM_MAX_ARGS - 1)];
			if (c->bytes_arg2 < EACGM_MAX_ARGS)
				bytes *= r->args[c->bytes_arg2 & (EACGM_MAX_ARGS - 1)];
			bytes <<= (c->bytes_shift & 7);
		}
	}
	int shared;
	struct eacgm_count_value *v = count_value(&key, &shared);
	if (!v)
		return 1;
	add_to(&v->calls, 1, shared);
	add_to(&v->bytes, bytes, shared);
	add_to(&v->windowed, in_window, shared);
	add_to(&v->switching, switching, shared);
	if (window && !(p->flags & EACGM_PROBE_CYCLED))
		add_pace_gap(v, *window, shared);

	/* Waiting calls ask for every return, to clear their mark; only sampled ones are timed
	 * (a cookie of 0 is not). */
	__u64 mask = ((__u64)1 << (c->sample_shift & 31)) - 1;
	int waits = p->flags & EACGM_PROBE_WAIT;
	if ((seen & mask) && !waits)
		return 1;
	__u64 *cookie = bpf_session_cookie();
	if (!cookie)
		return 1;
	__u64 now = bpf_ktime_get_ns();
	*cookie = (seen & mask) ? 0 : timing_cookie(now, task_run_delay(bpf_get_current_task_btf()));
	if (waits) {
		if (r)
			r->nargs = p->nargs;
		/* The name read when the thread's entry was made: no helper call per call. */
		enter_wait(ctx, probe_id, r, c->capture_mask, now, 0);
	}
	return 0;
}

static __always_inline int on_count_return(struct pt_regs *ctx)
{
	__u64 *cookie = bpf_session_cookie();
	if (cookie && *cookie == EACGM_CAPTURE_COOKIE)
		return on_exit(ctx); /* a captured call: its record goes out (capture_entry) */
	__u64 now = bpf_ktime_get_ns();
	__u32 probe_id = (__u32)bpf_get_attach_cookie(ctx);
	const struct eacgm_probe *p = bpf_map_lookup_elem(&probes, &probe_id);
	if (p && (p->flags & EACGM_PROBE_WAIT))
		leave_wait(ctx);
	if (!cookie || *cookie == 0)
		return 0;
	const __u64 ts_mask = (1ULL << EACGM_COOKIE_TS_BITS) - 1;
	const __u64 delay_mask = (1ULL << EACGM_COOKIE_DELAY_BITS) - 1;
	__u64 dur = (now - (*cookie >> EACGM_COOKIE_DELAY_BITS)) & ts_mask;
	if (dur >> (EACGM_COOKIE_TS_BITS - 1))
		return 0; /* the clocks disagree: entered "after" it returned */
	/* Held off the CPU for at least half its duration: its time is mostly the scheduler's. */
	__u64 waited = (((task_run_delay(bpf_get_current_task_btf()) >> EACGM_COOKIE_DELAY_SHIFT) - *cookie) &
			delay_mask)
		       << EACGM_COOKIE_DELAY_SHIFT;
	int held = waited > 0 && 2 * waited >= dur;
	struct eacgm_duration_key key = {};
	key.pid = bpf_get_current_pid_tgid() >> 32;
	key.probe_id = probe_id;
	key.bucket = eacgm_hist_key(dur);
	struct eacgm_duration_value *v = bpf_map_lookup_elem(&call_durations, &key);
	if (!v) {
		struct eacgm_duration_value first = {};
		bpf_map_update_elem(&call_durations, &key, &first, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&call_durations, &key);
		if (!v) {
			count(EACGM_CNT_DURATION_MAP_FULL);
			return 0;
		}
	}
	v->count += 1;
	v->sum_ns += dur;
	if (p && (p->flags & EACGM_PROBE_RET_ERR) && (__s32)PT_REGS_RC(ctx) != 0)
		v->errors += 1;
	if (held) {
		v->held += 1;
		v->held_sum_ns += dur;
		v->held_delay_ns += waited < dur ? waited : dur;
	}
	return 0;
}

/* Counted probes, on a uprobe session link (the agent sets the attach type before load). */
SEC("uprobe")
int eacgm_count_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return on_count_return(ctx);
	return on_count_entry(ctx);
}

/* Holds a USDT semaphore: the kernel raises the counter at the uprobe's ref_ctr_offset
 * in every process mapping the file for as long as the uprobe is attached. Attached
 * where the program runs at most once per process (CPython's Py_FinalizeEx), to keep
 * CPython 3.11's `line` semaphore raised: only then does 3.11 fire function__entry for
 * every call (src/probe/python_usdt.h). Firing does nothing. */
SEC("uprobe")
int eacgm_semaphore_hold(struct pt_regs *ctx)
{
	return 0;
}

/* Children of traced processes are traced too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(eacgm_fork, struct task_struct *parent, struct task_struct *child)
{
	if (!filter_pids)
		return 0;
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	if (ptgid == ctgid)
		return 0; /* a new thread, not a new process */
	__u8 *pv = bpf_map_lookup_elem(&target_pids, &ptgid);
	if (pv) {
		__u8 v = *pv; /* the parent's EACGM_TARGET_* flags */
		bpf_map_update_elem(&target_pids, &ctgid, &v, BPF_ANY);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(eacgm_exit_process, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, pid);
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (pid != tgid)
		return 0; /* a thread, not the process */
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&process_exits, &tgid, &now, BPF_ANY);
	if (filter_pids)
		bpf_map_delete_elem(&target_pids, &tgid);
	/* Captures the process left open end with it. */
	__s64 *open = bpf_map_lookup_elem(&capturing, &tgid);
	if (open) {
		__s64 left = __sync_lock_test_and_set(open, 0);
		if (left > 0)
			__sync_fetch_and_add(&captures_open, -left);
		bpf_map_delete_elem(&capturing, &tgid);
	}
	return 0;
}

/* A thread's entry in `calls_in_flight` goes with the thread, in a waiting call (killed,
 * or exiting from a signal handler: it never returns from it) or not. Every thread's
 * exit, any process; only threads that made a waiting call have an entry (a lookup takes
 * no lock: the delete only when there is one). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(eacgm_thread_exit, struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid);
	if (bpf_map_lookup_elem(&calls_in_flight, &tid))
		bpf_map_delete_elem(&calls_in_flight, &tid);
	return 0;
}

/* Discovery hint: a process exec'd, so its maps changed wholesale. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(eacgm_exec, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (!traced(tgid))
		return 0;
	struct eacgm_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(EACGM_CNT_RINGBUF_DROPS);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->type = EACGM_REC_EXEC;
	r->pid = tgid;
	r->tid = BPF_CORE_READ(task, pid);
	r->ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* Discovery hint: attached to the dynamic loader's debugger hook (_dl_debug_state),
 * which runs after every dlopen/dlclose. */
SEC("uprobe")
int eacgm_lib_loaded(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	if (!traced(tgid))
		return 0;
	struct eacgm_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(EACGM_CNT_RINGBUF_DROPS);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->type = EACGM_REC_LIB_LOADED;
	r->pid = tgid;
	r->tid = (__u32)id;
	r->ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	/* Hold a traced process (a launched command, a --pid target) until its new
	 * libraries are attached, so that no call made right after a dlopen (or at
	 * start-up) is missed. The agent sends SIGCONT once it has scanned the process.
	 * Targets marked EACGM_TARGET_NO_STOP are never stopped (their parent would see
	 * the stop: a shell's foreground job, a debugger). */
	if (stop_on_load && filter_pids) {
		__u8 *v = bpf_map_lookup_elem(&target_pids, &tgid);
		if (v && !(*v & EACGM_TARGET_NO_STOP) && bpf_send_signal(19 /* SIGSTOP */) == 0)
			r->flags |= EACGM_REC_STOPPED;
	}
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}
