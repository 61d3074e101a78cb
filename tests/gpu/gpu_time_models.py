"""Workloads for the GPU-time device check: each runs warm-up steps, STEPS steps for eacgm,
then STEPS steps under PyTorch's profiler (CUPTI kernel activity), and writes the
profiler's kernel durations as
{"kernels": {name: [duration_us, ...]}, "shapes": {name: {"GRID|BLOCK": [duration_us, ...]}}}
to OUT (GRID and BLOCK as "x,y,z"). Run under `eacgm run --gpu-time`, which
times a sample of the same process's launches with CUDA events through the hook. The hook
times only the steps meant for it: its ring's `paused` word (core/gpu_time_ring.h) is set
during the warm-up and the profiled steps, because each measurement disturbs the other
(the profiler's kernel tracing adds about 0.3 us to every event pair's span,
tests/gpu/empty_kernel_time.py).

With GPU_TIME_SECONDS=S the run is a short one as a user would start it: the hook times
from the first launch (the model's set-up and the warm-up included, not paused), the
warm-up and the steps for eacgm take S seconds together, and the profiler then runs as
many steps.

Usage: gpu_time_models.py {gpt,cnn,alt} OUT.json [STEPS]
  gpt: a GPT-style decoder (d 1024, 4 layers, sequence 512, batch 8, bf16)
  cnn: a ResNet-style CNN (bf16, batch 64, 64x64 images)
  alt: GEMMs of 4096x4096 outputs alternating between K = 2048 and K = 8192 (bf16): one
       kernel name and launch shape serving two problem sizes launched alternately
"""
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile


def gpt():
    d, layers, seq, batch = 1024, 4, 512, 8
    layer = torch.nn.TransformerEncoderLayer(d, 16, 4 * d, batch_first=True, norm_first=True)
    model = torch.nn.TransformerEncoder(layer, layers).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, d, device="cuda", dtype=torch.bfloat16)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(seq, device="cuda", dtype=torch.bfloat16)

    def step():
        opt.zero_grad(set_to_none=True)
        model(x, mask=mask, is_causal=True).float().pow(2).mean().backward()
        opt.step()
    return step


def cnn():
    def block(cin, cout):
        return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.BatchNorm2d(cout),
                                   torch.nn.ReLU(), torch.nn.Conv2d(cout, cout, 3, padding=1),
                                   torch.nn.BatchNorm2d(cout), torch.nn.ReLU())
    model = torch.nn.Sequential(block(3, 64), torch.nn.MaxPool2d(2), block(64, 128), torch.nn.MaxPool2d(2),
                                block(128, 256), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(256, 100)).cuda().to(torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 64, 64, device="cuda", dtype=torch.bfloat16)
    y = torch.randint(0, 100, (64,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x).float(), y).backward()
        opt.step()
    return step


def alt():
    a = torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    a1, b1 = a[:, :2048].contiguous(), b[:2048].contiguous()
    out = torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16)

    def step():
        for _ in range(4):
            torch.mm(a1, b1, out=out)
            torch.mm(a, b, out=out)
    return step


def pause_hook(paused):
    """Sets the hook's `paused` word (at byte 256 of its ring) when the process has one."""
    path = f"/dev/shm/eacgm-gpu-time.{os.getpid()}"
    if not os.path.exists(path):
        return
    with open(path, "r+b") as f:
        f.seek(256)
        f.write((1 if paused else 0).to_bytes(4, "little"))


def main():
    which, out = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    seconds = float(os.environ.get("GPU_TIME_SECONDS", "0"))
    step = {"gpt": gpt, "cnn": cnn, "alt": alt}[which]()
    start = time.monotonic()  # the warm-up steps and the steps for eacgm: S seconds
    pause_hook(seconds <= 0)
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    pause_hook(False)
    if seconds > 0:
        steps = 0
        while time.monotonic() - start < seconds:
            step()
            steps += 1
            if steps % 10 == 0:
                torch.cuda.synchronize()
    else:
        for _ in range(steps):
            step()
    torch.cuda.synchronize()
    pause_hook(True)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    trace = out + ".chrome.json"
    prof.export_chrome_trace(trace)
    kernels = {}
    shapes = {}
    for e in json.load(open(trace))["traceEvents"]:
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            kernels.setdefault(e["name"], []).append(float(e["dur"]))
            args = e.get("args", {})
            if "grid" in args and "block" in args:
                key = ",".join(map(str, args["grid"])) + "|" + ",".join(map(str, args["block"]))
                shapes.setdefault(e["name"], {}).setdefault(key, []).append(float(e["dur"]))
    json.dump({"kernels": kernels, "shapes": shapes, "steps": steps}, open(out, "w"))


main()
