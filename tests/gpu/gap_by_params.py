"""Whether what a CUDA event pair adds to a queued kernel depends on the kernel's
parameters: two short kernels of PyTorch timed with an event pair behind a 400 us spin (long
enough that the host has queued the pair and the kernel before the GPU reaches them), and
by the profiler (CUPTI). `x.add_(1)` on one element launches an elementwise kernel with a
few dozen bytes of parameters; `torch._foreach_add_` over 40 one-element tensors launches
`multi_tensor_apply_kernel` with a parameter block of about 4 KiB. Prints, per kernel, the
profiler's p50, the event-pair span's p50 and their difference (the pair's gap), on the
legacy default stream (PyTorch's) and on a stream of PyTorch's pool (non-blocking, like
the hook's own stream on which it measures the gap).

Usage: gap_by_params.py [ROUNDS]
"""
import json
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
cycles = int(400e-6 * torch.cuda.get_device_properties(0).clock_rate * 1e3)
x = torch.zeros(1, device="cuda")
tensors = [torch.zeros(1, device="cuda") for _ in range(40)]
side = torch.cuda.Stream()
side_x = torch.zeros(1, device="cuda")


def on_side():
    with torch.cuda.stream(side):
        side_x.add_(1)


cases = {"small": lambda: x.add_(1), "foreach": lambda: torch._foreach_add_(tensors, 1.0), "side": on_side}
spans = {k: [] for k in cases}
for _ in range(20):
    for f in cases.values():
        f()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    pairs = [(k, torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
             for _ in range(rounds) for k in cases]
    for k, s, e in pairs:
        stream = side if k == "side" else torch.cuda.current_stream()
        with torch.cuda.stream(stream):
            torch.cuda._sleep(cycles)
            s.record(stream)
            cases[k]()
            e.record(stream)
    torch.cuda.synchronize()
for k, s, e in pairs:
    spans[k].append(s.elapsed_time(e) * 1000)
trace = tempfile.mktemp(suffix=".json")
prof.export_chrome_trace(trace)
by_name = {}
for ev in json.load(open(trace))["traceEvents"]:
    if ev.get("cat") == "kernel" and ev.get("ph") == "X":
        by_name.setdefault(ev["name"], []).append(float(ev["dur"]))
for k in cases:
    want = "multi_tensor_apply" if k == "foreach" else "elementwise"
    name = next(n for n in by_name if want in n and "spin" not in n)
    # The side stream runs the same elementwise kernel: the profiler's figure is shared.
    cupti = statistics.median(by_name[name])
    span = statistics.median(spans[k])
    print(f"{k:8} {'side stream' if k == 'side' else 'default stream':14} cupti p50 {cupti:.3f} us, event-pair span p50 {span:.3f} us, gap {span - cupti:.3f} us ({name[:60]})")
