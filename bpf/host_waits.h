/* The kernel/user boundary of the host-wait tracer (bpf/host_waits.bpf.c): the in-kernel
 * histograms of the time traced processes spend blocked in futex waits and in the poll
 * family, which the agent drains. Fixed-width types only; src/probe/host_wait_tracer.cpp
 * pins sizes with static_asserts. */
#ifndef EACGM_BPF_HOST_WAITS_H
#define EACGM_BPF_HOST_WAITS_H

#include "events.h"

/* Version of this boundary; the object carries it as `wait_abi_version`. */
#define EACGM_WAIT_ABI_VERSION 1

/* What a thread waited in. */
enum eacgm_wait_kind {
	EACGM_WAIT_FUTEX = 1, /* futex waits: FUTEX_WAIT(_BITSET), the PI locks, futex_waitv */
	EACGM_WAIT_INPUT = 2, /* poll, ppoll, select, pselect6, epoll_wait, epoll_pwait(2) */
};

/* Cumulative per (process, kind, log bucket) while the process lives, the bucket being
 * eacgm_hist_key() of the wait's duration (the latency sketch's own buckets); the agent
 * reads them on a period and deletes a process's keys after it exits. */
struct eacgm_wait_key {
	eacgm_u32 pid;
	eacgm_u32 kind;
	eacgm_u32 bucket;
	eacgm_u32 pad;
};
struct eacgm_wait_value {
	eacgm_u64 count;
	eacgm_u64 sum_ns;
};

/* A process with waits, recorded at its first (or at its exec): its main thread's name
 * and when it started (or exec'd), and when its main thread exited (0 while running);
 * CLOCK_MONOTONIC ns. */
struct eacgm_wait_proc {
	char comm[EACGM_COMM_LEN];
	eacgm_u64 start_ns;
	eacgm_u64 exit_ns;
};

/* Counters of the tracer (a per-CPU array indexed by these). */
enum eacgm_wait_counter {
	EACGM_WAIT_CNT_MAP_FULL = 0,     /* waits not kept: `wait_hist` was full */
	EACGM_WAIT_CNT_OPEN_FULL = 1,    /* waits not timed: too many threads waiting at once */
	EACGM_WAIT_CNT_MAX = 2,
};

#endif
