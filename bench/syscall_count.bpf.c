// SPDX-License-Identifier: GPL-2.0
/* System calls of one process (all its threads) by number, for
 * eacgm-bench-syscalls: how often a traced program changes its address space (mmap,
 * munmap, mprotect, brk...), each of which makes the uprobe path's lock-free lookup of
 * the probe fall back to the address space's lock. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 512);
	__type(key, __u32);
	__type(value, __u64);
} syscall_counts SEC(".maps");

/* A raw tracepoint (no tracefs needed): args[0] is the registers, args[1] the number. */
SEC("raw_tracepoint/sys_enter")
int count_syscall(struct bpf_raw_tracepoint_args *ctx)
{
	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__u32 id = (__u32)ctx->args[1];
	__u64 *n = bpf_map_lookup_elem(&syscall_counts, &id);
	if (n)
		*n += 1;
	return 0;
}
