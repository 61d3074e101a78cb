# Device workload for NCCL across GPUs (run with torchrun --nproc_per_node N): known
# collectives with known sizes and datatypes; each rank writes what it called as JSON,
# the ground truth compare_nccl.py checks eacgm's events against.
# Usage: torchrun --nproc_per_node 2 nccl_two_ranks.py OUT_DIR
import json
import os
import sys

import torch
import torch.distributed as dist

out_dir = sys.argv[1]
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
dev = torch.device("cuda", rank)
calls = []

x = torch.ones(1 << 20, dtype=torch.float32, device=dev)
for _ in range(10):
    dist.all_reduce(x)
    calls.append(("ncclAllReduce", x.numel() * 4))
y = torch.ones(1 << 18, dtype=torch.bfloat16, device=dev)
gathered = torch.empty(world * y.numel(), dtype=torch.bfloat16, device=dev)
for _ in range(5):
    dist.all_gather_into_tensor(gathered, y)
    calls.append(("ncclAllGather", y.numel() * 2))  # send-side bytes
z = torch.arange(1000, dtype=torch.int64, device=dev)
for _ in range(3):
    dist.broadcast(z, src=0)
    calls.append(("ncclBroadcast", z.numel() * 8))
torch.cuda.synchronize()
with open(os.path.join(out_dir, f"nccl_rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "world": world, "pid": os.getpid(), "calls": calls}, f)
dist.destroy_process_group()
