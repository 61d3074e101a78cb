# Compares eacgm's events inside the profiled window with PyTorch profiler counts.
# Usage: compare_counts.py EVENTS_JSONL PROFILE_JSON
import collections
import json
import sys

events_path, prof_path = sys.argv[1], sys.argv[2]
prof = json.load(open(prof_path))
t0, t1 = prof["t0_ns"], prof["t1_ns"]
seen = collections.Counter()
nested = collections.Counter()
torch_ops = collections.Counter()
kernel_named = 0
launches_total = 0
total = 0
with open(events_path) as f:
    for line in f:
        e = json.loads(line)
        if e["domain"] == "gpu":
            continue  # NVML sample lines, not calls
        total += 1
        if t0 <= e["ts_ns"] <= t1:
            if e["domain"] == "torch":
                torch_ops[e["name"]] += 1
                continue
            seen[e["name"]] += 1
            if e.get("nested"):
                nested[e["name"]] += 1
            if "Launch" in e["name"] and not e.get("nested"):
                launches_total += 1
                kernel_named += "kernel" in e["args"]
names = sorted(set(seen) | set(prof["api_counts"]))
print(f"{'API':34} {'eacgm':>8} {'profiler':>9}  match")
for n in names:
    a, b = seen.get(n, 0), prof["api_counts"].get(n, 0)
    if a == 0 and b == 0:
        continue
    mark = "yes" if a == b else ("-" if b == 0 or a == 0 else "NO")
    print(f"{n:34} {a:8} {b:9}  {mark}")
launches_rt = sum(v for k, v in seen.items() if k.startswith("cudaLaunch"))
launches_drv = sum(v - nested.get(k, 0) for k, v in seen.items() if k.startswith("cuLaunch"))
print(f"events in file: {total}; in window: {sum(seen.values())}")
print(f"GPU kernels (profiler): {prof['gpu_kernels']}; runtime launches seen: {launches_rt}; "
      f"driver launches not nested in a runtime launch: {launches_drv}; sum: {launches_rt + launches_drv}")
print(f"launch events with a kernel name: {kernel_named} of {launches_total}")
if torch_ops:
    print(f"{'torch op (binding)':34} {'eacgm':>8} {'aten:: (profiler)':>18}")
    for name, n in torch_ops.most_common(12):
        print(f"{name:34} {n:8} {prof['aten_ops'].get('aten::' + name, 0):18}")
