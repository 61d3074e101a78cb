"""A PyTorch tenant for tests/gpu/govern_check.sh (runs under libeacgm_hook.so).

Modes:
  work SECONDS        fp16 matmuls (8192^2) with a synchronize every 4, for SECONDS;
                      prints "iters=N seconds=S rate=R" (iterations per second)
  launches N          N tiny kernels (x.add_(1) on 256 floats), synchronized at the end;
                      prints "per_launch_us=U" (host time per launch)
  oom                 allocates 256 MiB blocks until torch.cuda.OutOfMemoryError;
                      prints "oom=1 allocated_mib=M" (or "oom=0 ..." if none came, or
                      "oom_other=<exception>" if another error did)
  view                prints torch.cuda.mem_get_info() and an NVML query of GPU 0 (through
                      ctypes, as nvidia-smi-style tools do): "torch_total_mib=... nvml_total_mib=..."
"""
import ctypes
import sys
import time

import torch

MIB = 1 << 20


def work(seconds):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.monotonic()
    iters = 0
    while time.monotonic() - start < seconds:
        for _ in range(4):
            a @ b
        torch.cuda.synchronize()
        iters += 4
    elapsed = time.monotonic() - start
    print(f"iters={iters} seconds={elapsed:.3f} rate={iters / elapsed:.3f}", flush=True)


def launches(n):
    x = torch.zeros(256, device="cuda")
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    host = time.perf_counter() - start
    torch.cuda.synchronize()
    print(f"per_launch_us={host / n * 1e6:.3f}", flush=True)


def oom():
    blocks = []
    try:
        for _ in range(100000):
            blocks.append(torch.empty(256 * MIB, dtype=torch.uint8, device="cuda"))
    except torch.cuda.OutOfMemoryError:
        print(f"oom=1 allocated_mib={len(blocks) * 256}", flush=True)
        return
    except Exception as e:  # noqa: BLE001 - reported, the check fails on it
        print(f"oom_other={type(e).__name__}:{str(e)[:200]!r} allocated_mib={len(blocks) * 256}", flush=True)
        return
    print(f"oom=0 allocated_mib={len(blocks) * 256}", flush=True)


class NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def view():
    torch.empty(512 * MIB, dtype=torch.uint8, device="cuda")  # something in use
    free, total = torch.cuda.mem_get_info()
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    nvml.nvmlInit_v2()
    dev = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
    mem = NvmlMemory()
    rc = nvml.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(mem))
    print(f"torch_total_mib={total // MIB} torch_free_mib={free // MIB} nvml_rc={rc} "
          f"nvml_total_mib={mem.total // MIB} nvml_used_mib={mem.used // MIB} nvml_free_mib={mem.free // MIB}",
          flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "work":
        work(float(sys.argv[2]))
    elif mode == "launches":
        launches(int(sys.argv[2]))
    elif mode == "oom":
        oom()
    elif mode == "view":
        view()
    else:
        sys.exit(f"unknown mode {mode}")
