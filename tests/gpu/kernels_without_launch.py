# Lists the GPU kernels in a PyTorch profiler trace (export_chrome_trace) whose
# correlation id matches no CUDA runtime or driver API event: kernels that reached the
# GPU without a launch call the profiler saw. Also counts the launch APIs by name.
# Usage: kernels_without_launch.py TRACE_JSON
import collections
import json
import sys

trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
api_corr = {}
kernels = []
for e in events:
    cat = e.get("cat", "")
    args = e.get("args", {})
    if cat in ("cuda_runtime", "cuda_driver"):
        api_corr[args.get("correlation")] = e.get("name")
    elif cat == "kernel":
        kernels.append(e)
by_api = collections.Counter()
orphans = collections.Counter()
for k in kernels:
    api = api_corr.get(k.get("args", {}).get("correlation"))
    if api is None:
        a = k.get("args", {})
        orphans[(k["name"][:120], str(a.get("grid")), str(a.get("block")), a.get("correlation"))] += 1
    else:
        by_api[api] += 1
print(f"kernels: {len(kernels)}; by launching API: {dict(by_api)}")
print(f"kernels without a launch API event: {sum(orphans.values())}")
for (name, grid, block, corr), n in orphans.most_common(10):
    print(f"  {n:4} x {name} grid={grid} block={block} correlation={corr}")
