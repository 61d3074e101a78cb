"""Compares the launch counts the hook kept exactly (`gpu_time`) with the uprobes' counts
of the same `eacgm run --json --gpu-time` run, and prints each process's GPU busy share
from the timed spans beside NVML's SM utilization for it. Exit status 1 when a count
differs.

- Kernel launches in all: the hook's against the launch calls the uprobes saw that were
  not nested in another traced launch (a runtime launch reaches the driver's: one launch;
  a function's `calls` leave its nested calls out).
- The hook's own launches (`eacgm_*`: the kernels it measures its dispatch gap with) are
  seen by the uprobes only, and left out of their side.
- Per kernel name: the hook's against `gpu_work` (launches outside graphs). Launches
  recorded into a graph by stream capture are counted by the hook when recorded and by
  `gpu_work` when the graph runs, so where graphs were launched a name may have a surplus
  (its launches during captures), never a shortfall, and the surpluses add up to the
  uprobes' launch calls that `gpu_work` did not count.
- Graph launches: the hook's against the non-nested cudaGraphLaunch/cuGraphLaunch calls.

Usage: gpu_time_counts.py NAME EACGM_REPORT.json
"""
import collections
import json
import re
import sys

LAUNCH = re.compile(r"^(cuda|cu)Launch(Kernel|KernelExC|KernelEx|CooperativeKernel)(_v\d+)?(_ptsz)?$")
GRAPH = re.compile(r"^(cuda|cu)GraphLaunch(_ptsz)?$")


def main():
    name, report = sys.argv[1:3]
    doc = json.load(open(report))
    gt = doc.get("gpu_time", {})
    hook, hook_graphs = collections.Counter(), 0
    for k in gt.get("kernels", []):
        if k["graph"]:
            hook_graphs += k["launches"]
        else:
            hook[k["name"]] += k["launches"]
    calls = lambda pattern: sum(f["calls"] for f in doc.get("functions", []) if pattern.match(f["function"]))
    work, own = collections.Counter(), 0
    for r in doc["gpu_work"]["rows"]:
        if r["kind"] != "kernel":
            continue
        if r.get("name", "").startswith("eacgm_"):
            own += r["count"]
        else:
            work[r.get("name", "")] += r["count"] - r["graph"]
    probe_launches, probe_graphs = calls(LAUNCH) - own, calls(GRAPH)
    captured = probe_launches - sum(work.values())  # launch calls recorded into graphs
    diffs = {n: hook.get(n, 0) - work.get(n, 0) for n in set(hook) | set(work)}
    differ = {n: d for n, d in diffs.items() if d != 0}
    names_ok = (not differ) or (probe_graphs > 0 and all(d > 0 for d in differ.values())
                                and sum(differ.values()) == captured)
    total_ok = sum(hook.values()) == probe_launches and probe_launches > 0
    ok = total_ok and names_ok and hook_graphs == probe_graphs
    print(f"{name}: hook vs uprobes{'':20} {'hook':>10} {'uprobes':>10}")
    print(f"  {'kernel launches':<42} {sum(hook.values()):>10} {probe_launches:>10}")
    print(f"  {'kernel names':<42} {len(hook):>10} {len(work):>10}")
    print(f"  {'graph launches':<42} {hook_graphs:>10} {probe_graphs:>10}")
    print(f"  {'launch calls recorded into graphs':<42} {sum(differ.values()):>10} {captured:>10}")
    print(f"  {'names whose counts differ':<42} {len(differ):>10}")
    print(f"  {'the hook own launches (left out)':<42} {'':>10} {own:>10}")
    for n, d in sorted(differ.items(), key=lambda x: -abs(x[1]))[:8]:
        print(f"    {n[:70]}: hook {hook.get(n, 0)}, gpu_work {work.get(n, 0)}")
    for p in gt.get("processes", []):
        busy, nvml = p.get("busy_percent"), p.get("nvml_sm_percent")
        print(f"  pid {p['pid']}: launches {p['launches']}, timed {p['timed']}; busy "
              f"{'-' if busy is None else f'{busy:.1f}%'} by the timed spans on {p.get('devices', 0)} device(s); "
              f"NVML SM {'-' if nvml is None else f'{nvml:.1f}%'} over {p.get('nvml_samples', 0)} passes")
    print(f"  {'PASS' if ok else 'FAIL'}: {name} counts {'equal' if ok else 'differ'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
