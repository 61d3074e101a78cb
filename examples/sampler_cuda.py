"""CUDA runtime calls with the original eACGM's API: cudaMalloc, cudaMemcpy, cudaFree and
cudaLaunchKernel of every process using libcudart, until Ctrl-C; then cuda.json (open it
in https://ui.perfetto.dev). Try it with tests/programs/cuda_calls (build/cuda_calls).

    sudo PYTHONPATH=build/python python3 examples/sampler_cuda.py
"""
import json

from eacgm.bpf import BccBPF
from eacgm.collector import to_perfetto
from eacgm.sampler import eBPFSampler

# The CUDA runtime on this machine (a path that does not exist is probed by its name).
CUDART = "/usr/local/cuda/lib64/libcudart.so"

text = """
#include <uapi/linux/ptrace.h>

struct dim3 {
    unsigned int x, y, z;
};

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

int cudaMemcpyEntry(struct pt_regs *ctx){
    u64 byte_length = PT_REGS_PARM3(ctx);
    u64 memcpy_kind = PT_REGS_PARM4(ctx);
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@cudaMemcpy@%ld@%ld\\n", ts, byte_length, memcpy_kind);
    return 0;
};

int cudaMemcpyExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@cudaMemcpy\\n", ts);
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
    u32 g_y = PT_REGS_PARM2(ctx) >> 32;
    u32 g_z = PT_REGS_PARM3(ctx) & 0xFFFF;
    u32 b_x = PT_REGS_PARM4(ctx) & 0xFFFF;
    u32 b_y = PT_REGS_PARM4(ctx) >> 32;
    u32 b_z = PT_REGS_PARM5(ctx) & 0xFFFF;
    u32 threads = g_x * g_y * g_z * b_x * b_y * b_z;
    bpf_trace_printk("%ld@start@cudaLaunchKernel@%u\\n", ts, threads);
    return 0;
};

int cudaLaunchKernelExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@cudaLaunchKernel@%d\\n", ts, PT_REGS_RC(ctx));
    return 0;
};
"""

bpf = BccBPF("CUDAeBPF", text, ["-w"])

attach_config = [
    {
        "name": "CUDASampler",
        "exe_path": [CUDART],
        "exe_sym": ["cudaMalloc", "cudaMemcpy", "cudaFree", "cudaLaunchKernel"],
    },
]

sampler = eBPFSampler(bpf)
sampler.run(attach_config)
print("sampling; Ctrl-C ends", flush=True)

states = []
while True:
    try:
        states += sampler.sample(time_stamp=1)
    except KeyboardInterrupt:
        break

sampler.close()

with open("cuda.json", "w", encoding="utf-8") as f:
    json.dump(to_perfetto(states), f, indent=4)
print(f"cuda.json: {len(states)} states", flush=True)
