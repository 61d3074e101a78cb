// SPDX-License-Identifier: GPL-2.0
/* The floor for the overhead benchmark: empty uprobe programs, so that the kernel's
 * own uprobe/uretprobe cost can be told apart from eacgm's work. */
#include <linux/bpf.h>
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
