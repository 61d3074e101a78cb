# Device workload for NCCL analysis across GPUs (torchrun --nproc_per_node 2): 300
# all-reduces of 64 MiB, each followed by a synchronisation; rank 1 arrives 2 ms late at
# every one (a straggler) and 0.5 s late at number 150 (a sleeping collective, which
# rank 0's synchronisation then waits for). Each rank writes its pid and what it
# planted as JSON.
# Usage: torchrun --nproc_per_node 2 nccl_straggler.py OUT_DIR
import json
import os
import sys
import time

import torch
import torch.distributed as dist

out_dir = sys.argv[1]
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
x = torch.ones(16 << 20, dtype=torch.float32, device=torch.device("cuda", rank))
dist.all_reduce(x)  # connections set up
torch.cuda.synchronize()
sleep_at = 150
t_sleep = None
for i in range(300):
    if rank == 1:
        if i == sleep_at:
            t_sleep = time.time_ns()
            time.sleep(0.5)
        else:
            time.sleep(0.002)
    dist.all_reduce(x)
    torch.cuda.synchronize()
with open(os.path.join(out_dir, f"straggler_rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "world": world, "pid": os.getpid(), "late_rank": 1, "late_ms": 2,
               "sleep_at": sleep_at, "sleep_ms": 500, "t_sleep_ns": t_sleep}, f)
dist.destroy_process_group()
