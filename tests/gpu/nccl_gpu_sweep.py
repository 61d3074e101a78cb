# Device workload for NCCL bandwidth from GPU time (torchrun --nproc_per_node 2): for
# all-reduce, all-gather and reduce-scatter, sizes S from 1 MiB to 1 GiB (nccl-tests' S:
# the whole buffer; all-gather's output, reduce-scatter's input): a barrier, then ITERS
# calls back to back, all under PyTorch's profiler (CUPTI), so that eacgm and the
# profiler see the same calls of each size. Each rank writes, per (collective, S), the GPU
# durations of the NCCL kernels the profiler saw. The set-up and barrier all-reduces are
# 4 bytes: of another size class.
# Usage: torchrun --nproc_per_node 2 nccl_gpu_sweep.py OUT_DIR [ITERS] [MAX_MIB]
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

out_dir = sys.argv[1]
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20
max_mib = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
dev = torch.device("cuda", rank)
x = torch.ones(1, dtype=torch.float32, device=dev)
dist.all_reduce(x)  # connections set up
torch.cuda.synchronize()

def step(kind, s_bytes):
    n = s_bytes // 4  # float32 elements in S
    if kind == "AllReduce":
        buf = torch.ones(n, dtype=torch.float32, device=dev)
        return lambda: dist.all_reduce(buf)
    if kind == "AllGather":
        inp = torch.ones(n // world, dtype=torch.float32, device=dev)
        out = torch.empty(n, dtype=torch.float32, device=dev)
        return lambda: dist.all_gather_into_tensor(out, inp)
    inp = torch.ones(n, dtype=torch.float32, device=dev)
    out = torch.empty(n // world, dtype=torch.float32, device=dev)
    return lambda: dist.reduce_scatter_tensor(out, inp)

results = []
mib = 1
while mib <= max_mib:
    for kind in ("AllReduce", "AllGather", "ReduceScatter"):
        s_bytes = mib << 20
        fn = step(kind, s_bytes)
        torch.cuda.synchronize()
        dist.all_reduce(x)  # the ranks start each size together
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                fn()
            torch.cuda.synchronize()
        trace = os.path.join(out_dir, f"sweep_rank{rank}.chrome.json")
        prof.export_chrome_trace(trace)
        durs = [float(e["dur"]) * 1000.0 for e in json.load(open(trace))["traceEvents"]
                if e.get("cat") == "kernel" and e.get("ph") == "X" and e["name"].startswith("ncclDevKernel")]
        os.remove(trace)
        results.append({"kind": kind, "bytes": s_bytes, "calls": iters, "profiled_calls": iters,
                        "kernel_ns": durs})
        del fn
        torch.cuda.empty_cache()
    mib *= 2
with open(os.path.join(out_dir, f"sweep_rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "world": world, "pid": os.getpid(), "results": results}, f)
dist.destroy_process_group()
