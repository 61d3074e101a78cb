"""Compares eacgm's GPU work (`eacgm run --json`: gpu_work) with PyTorch's profiler
(a Chrome trace) for one process: kernels per name, memsets, copies per direction, and
the per-stream counts (stream handles and profiler stream ids differ: compared as sorted
lists). Prints a short table; exit status 1 when something differs.

Usage: fidelity_compare.py NAME EACGM_REPORT.json PROFILER_TRACE.json
"""
import collections
import json
import re
import sys


def profiler_work(path):
    trace = json.load(open(path))
    kernels, memsets, copies, per_stream = collections.Counter(), 0, collections.Counter(), collections.Counter()
    for e in trace.get("traceEvents", []):
        cat = e.get("cat", "")
        if e.get("ph") != "X":
            continue
        stream = e.get("args", {}).get("stream")
        if cat == "kernel":
            kernels[e["name"]] += 1
        elif cat == "gpu_memset":
            memsets += 1
        elif cat == "gpu_memcpy":
            m = re.match(r"Memcpy (\w+)", e["name"])
            copies[m.group(1) if m else e["name"]] += 1
        else:
            continue
        per_stream[stream] += 1
    return kernels, memsets, copies, sorted(per_stream.values())


def eacgm_work(path, pid=None):
    doc = json.load(open(path))
    rows = doc["gpu_work"]["rows"]
    if pid is None:  # the process that issued the most work: the workload's python
        by_pid = collections.Counter()
        for r in rows:
            by_pid[r["pid"]] += r["count"]
        pid = by_pid.most_common(1)[0][0] if by_pid else None
    kernels, memsets, copies, per_stream = collections.Counter(), 0, collections.Counter(), collections.Counter()
    graph = 0
    for r in rows:
        if r["pid"] != pid:
            continue
        graph += r["graph"]
        per_stream[r["stream"]] += r["count"]
        if r["kind"] == "kernel":
            kernels[r.get("name", "")] += r["count"]
        elif r["kind"] == "memset":
            memsets += r["count"]
        else:
            copies[r.get("direction", "")] += r["count"]
    return kernels, memsets, copies, sorted(per_stream.values()), graph, doc["accounting"]


def main():
    name, report, trace = sys.argv[1:4]
    pk, pm, pc, ps = profiler_work(trace)
    ek, em, ec, es, graph, acct = eacgm_work(report)
    ok = True
    lines = [f"{name}: profiler vs eacgm"]

    def row(what, p, e):
        nonlocal ok
        same = p == e
        ok = ok and same
        lines.append(f"  {what:<28} {str(p):>10} {str(e):>10}  {'ok' if same else 'DIFFERENT'}")

    row("kernels", sum(pk.values()), sum(ek.values()))
    row("distinct kernel names", len(pk), len(ek))
    row("kernel launches without a name", 0, ek.get("", 0))
    row("memsets", pm, em)
    row("copies", sum(pc.values()), sum(ec.values()))
    for d in sorted(set(pc) | set(ec)):
        row(f"copies {d}", pc.get(d, 0), ec.get(d, 0))
    row("per-stream counts", ps, es)
    # Every graph was made while traced: none launched with unknown contents.
    row("graph launches, work unknown", 0, acct.get("graph_launches_unknown", 0))
    lines.append(f"  graph work (eacgm): {graph}; names_unreadable={acct.get('names_unreadable', 0)}"
                 f" graph_launches={acct.get('graph_launches', 0)} unknown={acct.get('graph_launches_unknown', 0)}")
    diff = [(n, pk.get(n, 0), ek.get(n, 0)) for n in sorted(set(pk) | set(ek)) if pk.get(n, 0) != ek.get(n, 0)]
    for n, p, e in diff[:10]:
        lines.append(f"    name differs: {p} vs {e}: {n[:120]}")
    long_names = [n for n in ek if len(n) > 64]
    lines.append(f"  kernel names over 64 bytes seen by eacgm: {len(long_names)} (all in the profiler: "
                 f"{all(n in pk for n in long_names)})")
    print("\n".join(lines))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
