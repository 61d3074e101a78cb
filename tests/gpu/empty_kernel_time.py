"""What the profiler (CUPTI) reports for an empty 1x1 kernel queued behind earlier work on
this GPU, and the span a CUDA event pair gives the same kernel: the two figures the hook's
dispatch-gap correction rests on (src/govern/hook/dispatch_gap.cpp subtracts the span less
the empty kernel's own time from every queued span). The kernel is torch.cuda._sleep(0)
(one block of one thread that spins 0 cycles), each behind a 400 us spin (long enough that
the host has queued the pair and the kernel before the GPU reaches them).

Usage: empty_kernel_time.py [ROUNDS]
"""
import json
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
cycles = int(400e-6 * torch.cuda.get_device_properties(0).clock_rate * 1e3)  # about 400 us


def timed_spans():
    """`rounds` empty kernels, each behind a spin between an event pair: their spans (us)."""
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(rounds)]
    for start, end in pairs:
        torch.cuda._sleep(cycles)
        start.record()
        torch.cuda._sleep(0)
        end.record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) * 1000 for s, e in pairs)


for _ in range(20):
    torch.cuda._sleep(cycles)
    torch.cuda._sleep(0)
torch.cuda.synchronize()
# The same pairs without the profiler first: its kernel tracing adds work around each
# kernel, which an event pair sees.
bare_span = statistics.median(timed_spans())
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    spans = timed_spans()
trace = tempfile.mktemp(suffix=".json")
prof.export_chrome_trace(trace)
durs = sorted(float(e["dur"]) for e in json.load(open(trace))["traceEvents"]
              if e.get("cat") == "kernel" and e.get("ph") == "X")
short = durs[:rounds]  # the _sleep(0) kernels; the spins are the longer half
empty = statistics.median(short)
span = statistics.median(spans)
print(f"empty kernel (CUPTI) p50 {empty:.3f} us (p10 {short[len(short) // 10]:.3f}, p90 {short[9 * len(short) // 10]:.3f}); "
      f"event-pair span p50 {span:.3f} us; the pair's own gap {span - empty:.3f} us; "
      f"spin p50 {statistics.median(durs[rounds:]):.1f} us; without the profiler the span p50 is "
      f"{bare_span:.3f} us; {torch.cuda.get_device_name(0)}")
