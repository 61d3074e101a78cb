"""Summarises GPT short runs of tests/gpu/gpu_time_short_runs.sh: per run, the launches
timed, how many of them started on an idle stream, the samples (spans queued behind
earlier work), the launching thread's cost per timed launch, the GPU's busy share, and of
the kernels launched 100 times or more (by name, shapes together) how many have 10
samples and how many 10 timed launches (the first left out). Exit status 1 when a run has
a kernel launched 100 times or more with fewer than 10 samples.

Usage: gpu_time_short_summary.py EACGM.json [EACGM.json ...]
"""
import json
import sys

MIN_LAUNCHES = 100
MIN_SAMPLES = 10
short_runs = 0
print(f"{'run':>4} {'timed':>6} {'idle':>5} {'samples':>7} {'us/timed':>8} {'busy':>5} "
      f"{'>=10 samples':>12} {'>=10 timed':>10}  fewest samples")
for i, path in enumerate(sys.argv[1:], 1):
    doc = json.load(open(path))["gpu_time"]
    kernels = [k for k in doc["kernels"] if not k["graph"]]
    proc = max(doc["processes"], key=lambda p: p["launches"])
    by_name = {}
    for k in kernels:
        b = by_name.setdefault(k["name"], {"launches": 0, "samples": 0, "timed": 0})
        b["launches"] += k["launches"]
        b["samples"] = max(b["samples"], k["samples"])
        b["timed"] = max(b["timed"], k["timed"] - 1)
    many = {n: b for n, b in by_name.items() if b["launches"] >= MIN_LAUNCHES}
    with_samples = sum(1 for b in many.values() if b["samples"] >= MIN_SAMPLES)
    with_timed = sum(1 for b in many.values() if b["timed"] >= MIN_SAMPLES)
    fewest = min(((b["samples"], n[:40]) for n, b in many.items()), default=(0, ""))
    short_runs += with_samples < len(many)
    print(f"{i:>4} {sum(k['timed'] for k in kernels):>6} {sum(k['idle_starts'] for k in kernels):>5} "
          f"{sum(k['samples'] for k in kernels):>7} {proc['timing_cost_ns'] / max(1, proc['timed']) / 1e3:>8.1f} "
          f"{proc['busy_percent']:>4.0f}% {with_samples:>5} of {len(many):<3} {with_timed:>3} of {len(many):<3}"
          f"  {fewest[0]} ({fewest[1]})")
print(f"{'PASS' if short_runs == 0 else 'FAIL'}: {short_runs} of {len(sys.argv) - 1} runs left a kernel "
      f"launched >= {MIN_LAUNCHES} times under {MIN_SAMPLES} samples")
sys.exit(1 if short_runs else 0)
