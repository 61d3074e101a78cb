// SPDX-License-Identifier: GPL-2.0
/* Floors for the overhead benchmark. bare_*: empty uprobe programs, so that the
 * kernel's own uprobe/uretprobe cost can be told apart from eacgm's work. min_*: the
 * least any tracer that sends one record per call must do (an entry timestamp kept
 * per thread, and at exit a 32-byte ring-buffer record), as a floor for that design. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int bare_entry(void *ctx)
{
	return 0;
}

SEC("uprobe")
int bare_exit(void *ctx)
{
	return 0;
}

/* On a uprobe session link (the tool sets the attach type): runs at entry and declines
 * the return, as the always-on mode's counted probes do for the calls they do not time. */
SEC("uprobe")
int bare_session(void *ctx)
{
	return 1;
}

/* The least a count per process can do, on a session link that declines the return:
 * one per-CPU hash lookup by (process, probe) and an increment (the first call of a key
 * inserts it). The floor of the always-on mode's counted calls, whose key also holds the
 * handle and the stream. */
struct min_count_key {
	__u32 tgid;
	__u32 probe;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, struct min_count_key);
	__type(value, __u64);
} min_counts SEC(".maps");

SEC("uprobe")
int min_count(void *ctx)
{
	struct min_count_key key = {
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.probe = (__u32)bpf_get_attach_cookie(ctx),
	};
	__u64 *n = bpf_map_lookup_elem(&min_counts, &key);
	if (n) {
		*n += 1;
		return 1;
	}
	__u64 one = 1;
	bpf_map_update_elem(&min_counts, &key, &one, BPF_NOEXIST);
	return 1;
}

struct min_record {
	__u64 pid_tgid;
	__u64 ts_ns;
	__u64 dur_ns;
	__u64 cookie;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} min_entry_ts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} min_events SEC(".maps");

SEC("uprobe")
int min_entry(void *ctx)
{
	__u64 *ts = bpf_task_storage_get(&min_entry_ts, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

SEC("uprobe")
int min_exit(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 *ts = bpf_task_storage_get(&min_entry_ts, bpf_get_current_task_btf(), 0, 0);
	if (!ts)
		return 0;
	struct min_record r = {
		.pid_tgid = bpf_get_current_pid_tgid(),
		.ts_ns = *ts,
		.dur_ns = now - *ts,
		.cookie = bpf_get_attach_cookie(ctx),
	};
	bpf_ringbuf_output(&min_events, &r, sizeof(r), BPF_RB_NO_WAKEUP);
	return 0;
}
