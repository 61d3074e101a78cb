"""Loads for the GPM device check: idle, a bf16 GEMM loop, a DRAM-bound copy loop and a
pinned host-to-device copy loop, one after another on GPU 0. Prints one JSON line per
phase with its wall-clock window and what the program itself measured (bytes per
second), then the GPU's peak DRAM bandwidth from NVML (memory bus width x max memory
clock x 2). Usage: gpm_loads.py SECONDS_PER_PHASE"""
import ctypes
import json
import sys
import time

import torch

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
dev = torch.device("cuda:0")


def emit(**kv):
    print(json.dumps(kv), flush=True)


def peak_dram_bytes_per_second():
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    nvml.nvmlInit_v2()
    handle = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle))
    width, clock = ctypes.c_uint(), ctypes.c_uint()
    if nvml.nvmlDeviceGetMemoryBusWidth(handle, ctypes.byref(width)) != 0:
        return None
    if nvml.nvmlDeviceGetMaxClockInfo(handle, 2, ctypes.byref(clock)) != 0:  # NVML_CLOCK_MEM
        return None
    return clock.value * 1e6 * 2 * width.value / 8


def timed(name, body, bytes_per_iter=0):
    torch.cuda.synchronize()
    start = time.time()
    iters = 0
    while time.time() - start < SECONDS:
        for _ in range(8):
            body()
        iters += 8
        torch.cuda.synchronize()
    end = time.time()
    emit(phase=name, start=start, end=end, iters=iters,
         measured_bytes_per_second=bytes_per_iter * iters / (end - start) if bytes_per_iter else None)


torch.zeros(1, device=dev)
torch.cuda.synchronize()
start = time.time()
time.sleep(SECONDS)
emit(phase="idle", start=start, end=time.time())

a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
c = torch.empty_like(a)
timed("gemm", lambda: torch.matmul(a, b, out=c))
del a, b, c

n = 1 << 30  # 1 GiB each way: a copy reads and writes it
src = torch.empty(n, dtype=torch.uint8, device=dev)
dst = torch.empty_like(src)
timed("dram", lambda: dst.copy_(src), bytes_per_iter=2 * n)
del src, dst

m = 256 << 20
host = torch.empty(m, dtype=torch.uint8).pin_memory()
gpu = torch.empty(m, dtype=torch.uint8, device=dev)
timed("pcie_h2d", lambda: gpu.copy_(host, non_blocking=True), bytes_per_iter=m)

emit(peak_dram_bytes_per_second=peak_dram_bytes_per_second())
