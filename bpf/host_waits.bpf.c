// SPDX-License-Identifier: GPL-2.0
/* The host-wait tracer: how long the threads of traced processes stay blocked in futex
 * waits (locks, condition variables, joins, queues between threads) and in the poll
 * family (waiting for input on pipes and sockets: a DataLoader's main process waiting for
 * its workers' batches). On the raw syscall tracepoints, attached by name (no tracefs
 * needed): the entry of a wait syscall of a watched process stores its start per thread,
 * the exit adds the duration to a per-(process, kind) log-bucket histogram. No record per
 * syscall; the agent reads the histograms on a period, with each waiting process's name,
 * start and exit. Calls that cannot block (a zero timeout) and futex waits that found
 * the word already changed (EAGAIN: never slept) are left out. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <linux/futex.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "host_waits.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 wait_abi_version = EACGM_WAIT_ABI_VERSION;

/* x86-64 numbers (arch/x86/entry/syscalls/syscall_64.tbl) older headers may lack. */
#ifndef __NR_epoll_pwait2
#define __NR_epoll_pwait2 441
#endif
#ifndef __NR_futex_waitv
#define __NR_futex_waitv 449
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define EAGAIN_RET (-11)

/* The watched processes (tgid -> any value). Laid out as the tracer's `target_pids`
 * (bpf/trace.bpf.c), whose map the agent hands over when it traces chosen processes, so
 * their children are watched from their fork; on the whole machine the agent fills its
 * own with the processes that make traced calls. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} wait_pids SEC(".maps");

/* A thread's open wait: when it began and what kind (tid -> it). */
struct open_wait {
	__u64 start_ns;
	__u32 kind;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct open_wait);
} open_waits SEC(".maps");

/* Sized by the agent before load; allocated as keys appear. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct eacgm_wait_key);
	__type(value, struct eacgm_wait_value);
} wait_hist SEC(".maps");

/* Each process with waits (tgid -> its name, start and exit), made at its first (or when
 * a watched process execs: a new program starts then, not at its fork; a launched
 * command waits at eacgm's start gate between the two): a short-lived process is gone
 * before the agent could read /proc. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct eacgm_wait_proc);
} wait_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EACGM_WAIT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} wait_counters SEC(".maps");

/* The kernel's register names (CO-RE finds the fields by name in its BTF). */
struct pt_regs___kernel {
	unsigned long di;
	unsigned long si;
	unsigned long dx;
	unsigned long r10;
	unsigned long r8;
	unsigned long orig_ax;
} __attribute__((preserve_access_index));

struct task_struct___wait {
	int pid;
	int tgid;
	__u64 start_time; /* CLOCK_MONOTONIC ns */
	struct task_struct___wait *group_leader;
	char comm[EACGM_COMM_LEN];
} __attribute__((preserve_access_index));

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&wait_counters, &which);
	if (c)
		*c += 1;
}

/* A timeout given by pointer (timespec or timeval: two longs) that is zero: the call
 * polls without blocking. NULL waits without a limit. */
static __always_inline int zero_timeout_at(unsigned long uptr)
{
	if (!uptr)
		return 0;
	long t[2] = {};
	if (bpf_probe_read_user(t, sizeof(t), (const void *)uptr))
		return 0;
	return t[0] == 0 && t[1] == 0;
}

/* The kind of wait a syscall entry starts, or 0 for calls that are not waits. Syscall
 * arguments: di, si, dx, r10, r8 (the fourth is r10, not rcx). */
static __always_inline __u32 wait_kind(struct pt_regs___kernel *regs, long id)
{
	switch (id) {
	case __NR_futex: {
		/* The command without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME. */
		int cmd = (int)BPF_CORE_READ(regs, si) & FUTEX_CMD_MASK;
		if (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
		    cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_WAIT_REQUEUE_PI)
			return EACGM_WAIT_FUTEX;
		return 0;
	}
	case __NR_futex_waitv:
		return EACGM_WAIT_FUTEX;
	case __NR_poll: /* (fds, nfds, int timeout_ms) */
		return (int)BPF_CORE_READ(regs, dx) == 0 ? 0 : EACGM_WAIT_INPUT;
	case __NR_epoll_wait:  /* (epfd, events, maxevents, int timeout_ms) */
	case __NR_epoll_pwait: /* (..., int timeout_ms, sigmask, sigsetsize) */
		return (int)BPF_CORE_READ(regs, r10) == 0 ? 0 : EACGM_WAIT_INPUT;
	case __NR_ppoll: /* (fds, nfds, struct timespec *tsp, sigmask, sigsetsize) */
		return zero_timeout_at(BPF_CORE_READ(regs, dx)) ? 0 : EACGM_WAIT_INPUT;
	case __NR_epoll_pwait2: /* (epfd, events, maxevents, struct timespec *timeout, ...) */
		return zero_timeout_at(BPF_CORE_READ(regs, r10)) ? 0 : EACGM_WAIT_INPUT;
	case __NR_select:   /* (n, in, out, ex, struct timeval *tvp) */
	case __NR_pselect6: /* (n, in, out, ex, struct timespec *tsp, sig) */
		return zero_timeout_at(BPF_CORE_READ(regs, r8)) ? 0 : EACGM_WAIT_INPUT;
	}
	return 0;
}

static __always_inline int is_wait_syscall(long id)
{
	return id == __NR_futex || id == __NR_futex_waitv || id == __NR_poll || id == __NR_ppoll ||
	       id == __NR_select || id == __NR_pselect6 || id == __NR_epoll_wait ||
	       id == __NR_epoll_pwait || id == __NR_epoll_pwait2;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(eacgm_wait_enter, struct pt_regs___kernel *regs, long id)
{
	if (!is_wait_syscall(id))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	if (!bpf_map_lookup_elem(&wait_pids, &tgid))
		return 0;
	__u32 kind = wait_kind(regs, id);
	if (!kind)
		return 0;
	__u32 tid = (__u32)pid_tgid;
	struct open_wait w = {.start_ns = bpf_ktime_get_ns(), .kind = kind};
	if (bpf_map_update_elem(&open_waits, &tid, &w, BPF_ANY))
		count(EACGM_WAIT_CNT_OPEN_FULL);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(eacgm_wait_exit, struct pt_regs___kernel *regs, long ret)
{
	long id = (long)BPF_CORE_READ(regs, orig_ax);
	if (!is_wait_syscall(id))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct open_wait *w = bpf_map_lookup_elem(&open_waits, &tid);
	if (!w)
		return 0;
	__u64 start = w->start_ns;
	__u32 kind = w->kind;
	bpf_map_delete_elem(&open_waits, &tid);
	if (kind == EACGM_WAIT_FUTEX && ret == EAGAIN_RET)
		return 0; /* the futex word had changed: the thread never slept */
	__u64 now = bpf_ktime_get_ns();
	__u64 dur = now > start ? now - start : 0;

	struct eacgm_wait_key key = {};
	key.pid = pid_tgid >> 32;
	key.kind = kind;
	key.bucket = eacgm_hist_key(dur);
	struct eacgm_wait_value *v = bpf_map_lookup_elem(&wait_hist, &key);
	if (!v) {
		struct eacgm_wait_value first = {};
		bpf_map_update_elem(&wait_hist, &key, &first, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&wait_hist, &key);
		if (!v) {
			count(EACGM_WAIT_CNT_MAP_FULL);
			return 0;
		}
		struct task_struct___wait *task = (struct task_struct___wait *)bpf_get_current_task();
		struct eacgm_wait_proc proc = {};
		BPF_CORE_READ_INTO(&proc.comm, task, group_leader, comm);
		proc.start_ns = BPF_CORE_READ(task, group_leader, start_time);
		bpf_map_update_elem(&wait_procs, &key.pid, &proc, BPF_NOEXIST);
	}
	v->count += 1;
	v->sum_ns += dur;
	return 0;
}

/* The exit of a process with waits: when its main thread exits. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(eacgm_wait_proc_exit, struct task_struct___wait *task)
{
	__u32 pid = BPF_CORE_READ(task, pid);
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (pid != tgid)
		return 0;
	struct eacgm_wait_proc *p = bpf_map_lookup_elem(&wait_procs, &tgid);
	if (p)
		p->exit_ns = bpf_ktime_get_ns();
	return 0;
}

/* A watched process exec'd: it starts anew, under its new name. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(eacgm_wait_proc_exec, struct task_struct___wait *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (!bpf_map_lookup_elem(&wait_pids, &tgid))
		return 0;
	struct eacgm_wait_proc proc = {};
	BPF_CORE_READ_INTO(&proc.comm, task, comm); /* already the new program's */
	proc.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&wait_procs, &tgid, &proc, BPF_ANY);
	return 0;
}
