# Device workload: a small transformer trained for a few steps on the GPU, with
# PyTorch's own profiler around the measured steps as ground truth. Writes the
# profiler's per-API call counts and the window's wall-clock bounds as JSON.
# Usage: torch_train.py OUT_JSON [STEPS]
import json
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

out_path = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
dev = torch.device("cuda")
torch.manual_seed(0)
model = torch.nn.TransformerEncoder(
    torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True),
    num_layers=2).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(16, 64, 256, device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss


for _ in range(3):  # warm-up: allocator, cuBLAS handles, autotuning
    step()
torch.cuda.synchronize()

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    t0 = time.time_ns()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
t1 = time.time_ns()  # after the profiler's own teardown calls, which it also counts

counts = {}
ops = {}
for evt in prof.events():
    name = evt.name
    if evt.device_type == torch.autograd.DeviceType.CUDA:
        continue  # kernels, copies, memsets and GPU-side annotations: counted below
    if name.startswith("cuda") or name.startswith("cu"):
        counts[name] = counts.get(name, 0) + 1
    elif name.startswith("aten::"):
        ops[name] = ops.get(name, 0) + 1
# GPU kernels from the exported trace's "kernel" category: device events also hold
# copies, memsets and the optimizer's GPU-side user annotation (one per step), which
# are not kernels.
prof.export_chrome_trace(out_path + ".trace.json")
with open(out_path + ".trace.json") as f:
    kernels = sum(1 for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel")
with open(out_path, "w") as f:
    json.dump({"t0_ns": t0, "t1_ns": t1, "steps": steps, "api_counts": counts, "aten_ops": ops,
               "gpu_kernels": kernels, "torch": torch.__version__}, f)
print(f"trained {steps} steps, loss {step().item():.4f}, profiler saw {kernels} GPU kernels")
