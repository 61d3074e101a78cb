# Device workload for the analysis checks: a small transformer trained for STEPS steps
# with a known hot Python function, a deliberate leak and one injected slow step.
# - Leak: 64 MiB through the CUDA runtime torch loaded (cudaMalloc via ctypes), never
#   freed; its address is printed ("leak ptr=0x... size=N").
# - Slow step: at step SLOW_AT the GPU spins ~0.75 s (torch.cuda._sleep) before the
#   step's loss is read, so that step's synchronisation waits that long ("slow step I
#   t0_ns T0 t1_ns T1").
# - Hot function: hot_python() burns CPU in pure Python each step; its share of the
#   main thread's CPU time since the thread started (imports included, as the sampler
#   sees them) is printed at the end ("hot_share X").
# Usage: torch_leak_slow.py [STEPS [SLOW_AT]]
import ctypes
import os
import sys
import time

import nvidia
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
slow_at = int(sys.argv[2]) if len(sys.argv) > 2 else 200
dev = torch.device("cuda")
torch.manual_seed(0)
model = torch.nn.TransformerEncoder(
    torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True),
    num_layers=2).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(16, 64, 256, device=dev)

cudart = ctypes.CDLL(os.path.join(list(nvidia.__path__)[0], "cu13", "lib", "libcudart.so.13"))
leak = ctypes.c_void_p()
rc = cudart.cudaMalloc(ctypes.byref(leak), 64 << 20)
print(f"leak ptr={leak.value:#x} size={64 << 20} rc={rc}", flush=True)


def hot_python(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def step():
    opt.zero_grad(set_to_none=True)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss


hot_cpu = 0
for i in range(steps):
    h0 = time.thread_time_ns()
    hot_python(20000)
    hot_cpu += time.thread_time_ns() - h0
    loss = step()
    if i == slow_at:
        torch.cuda._sleep(1_500_000_000)
        t0 = time.time_ns()
        loss.item()
        print(f"slow step {i} t0_ns {t0} t1_ns {time.time_ns()}", flush=True)
    else:
        loss.item()
total_cpu = time.thread_time_ns()
print(f"hot_share {hot_cpu / total_cpu:.4f} pid {os.getpid()}", flush=True)
