"""Everything at once, as the original's sampler_eacg.py: the CUDA runtime's allocations
and launches of every process (the original's BPF text), and the GPUs and the processes on
them through NVML (GPUSampler, NVMLSampler), every second until Ctrl-C; then eacg.json, one
Perfetto timeline (open it in https://ui.perfetto.dev): the calls as B/E slices per
process and thread, each GPU's utilization and memory as counter tracks, and each
process's SM share per GPU as counters of its own process. Try it with
tests/programs/cuda_calls (build/cuda_calls).

    sudo PYTHONPATH=build/python python3 examples/sampler_eacg.py
"""
import json
import time

from eacgm.bpf import BccBPF
from eacgm.collector import to_perfetto
from eacgm.sampler import GPUSampler, NVMLSampler, eBPFSampler

# The CUDA runtime on this machine (a path that does not exist is probed by its name).
CUDART = "/usr/local/cuda/lib64/libcudart.so"

text = """
#include <uapi/linux/ptrace.h>

int cudaMallocEntry(struct pt_regs *ctx){
    u64 malloc_ptr = PT_REGS_PARM1(ctx);
    u64 byte_length = PT_REGS_PARM2(ctx);
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@cudaMalloc@%ld@%ld\\n", ts, malloc_ptr, byte_length);
    return 0;
};

int cudaMallocExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@cudaMalloc\\n", ts);
    return 0;
};

int cudaFreeEntry(struct pt_regs *ctx){
    u64 malloc_ptr = PT_REGS_PARM1(ctx);
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@cudaFree@%ld\\n", ts, malloc_ptr);
    return 0;
};

int cudaFreeExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@cudaFree\\n", ts);
    return 0;
};

int cudaLaunchKernelEntry(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    u32 g_x = PT_REGS_PARM2(ctx) & 0xFFFF;
    u32 b_x = PT_REGS_PARM4(ctx) & 0xFFFF;
    bpf_trace_printk("%ld@start@cudaLaunchKernel@%u@%u\\n", ts, g_x, b_x);
    return 0;
};

int cudaLaunchKernelExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@cudaLaunchKernel@%d\\n", ts, PT_REGS_RC(ctx));
    return 0;
};
"""

bpf = BccBPF("eACGeBPF", text, ["-w"])
attach_config = [
    {
        "name": "CUDASampler",
        "exe_path": [CUDART],
        "exe_sym": ["cudaMalloc", "cudaFree", "cudaLaunchKernel"],
    },
]
calls = eBPFSampler(bpf)
gpus = GPUSampler()
procs = NVMLSampler()
calls.run(attach_config)
gpus.run()
procs.run()
print("sampling; Ctrl-C ends", flush=True)

states = []
counters = []  # Perfetto counter events ("ph": "C"), ts in microseconds as the slices'
while True:
    try:
        states += calls.sample(time_stamp=1)
        now_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e3
        for g in gpus.sample():
            counters.append({"name": f"GPU {g.gpu} utilization (%)", "ph": "C", "ts": now_us, "pid": 0,
                             "args": {"sm": g.sm}})
            counters.append({"name": f"GPU {g.gpu} memory used (MiB)", "ph": "C", "ts": now_us, "pid": 0,
                             "args": {"used": g.usedMem / 2**20}})
        for p in procs.sample():
            counters.append({"name": f"GPU {p.gpu} SM (%)", "ph": "C", "ts": now_us, "pid": p.pid,
                             "args": {"sm": p.sm}})
        print("---", flush=True)
    except KeyboardInterrupt:
        break

calls.close()
gpus.close()
procs.close()
events = to_perfetto(states) + counters
with open("eacg.json", "w", encoding="utf-8") as f:
    json.dump(events, f, indent=4)
print(f"eacg.json: {len(states)} states, {len(counters)} counters", flush=True)
