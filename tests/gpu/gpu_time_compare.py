"""Compares the kernel GPU durations eacgm timed through the hook (`run --json`'s
gpu_time.kernels) with PyTorch's profiler's (CUPTI) over the same process: for every
kernel of p50 >= 10 us in the profiler that eacgm timed at least MIN_TIMED times, the p50s
must be within 5%. The p50 eacgm reports comes from the spans whose kernel followed its
start event at once (queued behind earlier work); a kernel that only ever started on an idle
stream is an upper bound and is listed apart. Prints one line per kernel and PASS/FAIL.

Usage: gpu_time_compare.py WORKLOAD EACGM.json PROFILER.json
"""
import json
import statistics
import sys

MIN_TIMED = 3
workload, eacgm_path, prof_path = sys.argv[1:4]
doc = json.load(open(eacgm_path))
prof = json.load(open(prof_path))["kernels"]
rows = {}
bounds = []
for k in doc["gpu_time"]["kernels"]:
    if not k["timed"] or k["graph"]:
        continue
    if k["upper_bound"]:
        bounds.append(k["name"])
        continue
    rows.setdefault(k["name"], k)
compared = worst = 0
fails = []
print(f"{'kernel':60} {'timed':>6} {'idle':>5} {'eacgm p50':>10} {'cupti p50':>10} {'diff':>7}")
for name, durs in sorted(prof.items(), key=lambda kv: -sum(kv[1])):
    p50 = statistics.median(durs)
    if p50 < 10 or name not in rows or rows[name]["timed"] - rows[name]["idle_starts"] < MIN_TIMED:
        continue
    ours = rows[name]["p50_ns"] / 1000.0
    diff = (ours - p50) / p50
    compared += 1
    worst = max(worst, abs(diff))
    print(f"{name[:60]:60} {rows[name]['timed']:6d} {rows[name]['idle_starts']:5d} {ours:10.2f} {p50:10.2f} "
          f"{100 * diff:6.2f}%")
    if abs(diff) > 0.05:
        fails.append(name)
unmatched = [n for n in prof if n not in rows and n not in bounds]
print(f"{workload}: {len(bounds)} kernels only ever timed on an idle stream (upper bounds, not compared)")
print(f"{workload}: {compared} kernels compared (p50 >= 10 us, timed >= {MIN_TIMED}), worst {100 * worst:.2f}%; "
      f"{len(unmatched)} profiler kernel names eacgm did not time; process launches {doc['gpu_time']['processes']}")
if compared == 0:
    print(f"FAIL: {workload}: no kernel to compare")
    sys.exit(1)
if fails:
    print(f"FAIL: {workload}: {len(fails)} kernels off by more than 5%: {fails[:5]}")
    sys.exit(1)
print(f"PASS: {workload}: every compared kernel's p50 within 5% of the profiler's")
