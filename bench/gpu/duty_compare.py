#!/usr/bin/env python3
# A duty-cycled run's counts against an exact run's (bench/gpu/duty_accuracy.sh,
# bench/gpu/duty_ranks.sh): DIR holds duty.json and exact.json (`eacgm run --json`) and,
# where it was logged, duty.log (EACGM_DUTY_LOG). Prints the share of the time the cycled
# probes were attached and the switches, then per kind of operation (launches, copies,
# memsets) the estimate against the exact count with the error the estimate reports;
# with --ranks, also the kernels of each process in both runs, the switches' mean times
# and each process's measured slowdown.
# Usage: duty_compare.py DIR LABEL [--ranks]
import json
import sys


def load(path):
    text = open(path).read()
    try:
        return json.loads(text)
    except ValueError:
        sys.exit(f"{path}: not JSON: {text[:300]!r}")


def kind(name):
    for prefix, k in (("cuLaunch", "launch"), ("cuMemcpy", "copy"), ("cuMemset", "memset")):
        if name.startswith(prefix):
            return k
    return None


def totals(doc):
    """Per kind: [calls, variance reported]."""
    out = {}
    for f in doc["functions"]:
        k = kind(f["function"])
        if k:
            c = out.setdefault(k, [0, 0.0])
            c[0] += f["calls"]
            c[1] += (f.get("calls_error") or 0) ** 2
    return out


def kernels_per_process(doc):
    per = {}
    for r in doc["gpu_work"]["rows"]:
        if r["kind"] == "kernel":
            per[r["pid"]] = per.get(r["pid"], 0) + r["count"]
    return sorted(per.values())


def main():
    folder, label, ranks = sys.argv[1], sys.argv[2], "--ranks" in sys.argv[3:]
    d, e = load(f"{folder}/duty.json"), load(f"{folder}/exact.json")
    o, a = d["overhead"], d["accounting"]
    print(f"{label}: cycled probes attached {o.get('attached_share', 1) * 100:.1f}% of the time"
          f" (duty now {o.get('duty_fraction', 1) * 100:.1f}%), {a.get('duty_switches', 0)} switches,"
          f" {a.get('duty_failures', 0)} failures, {a.get('duty_switch_traps', 0)} traps while switching")
    td, te = totals(d), totals(e)
    for k in ("launch", "copy", "memset"):
        exact = te.get(k, [0, 0])[0]
        est, err = td.get(k, [0, 0])[0], td.get(k, [0, 0.0])[1] ** 0.5
        rel = (est - exact) / exact * 100 if exact else 0.0
        print(f"  {k}: estimate {est} vs exact {exact}: {rel:+.2f}%"
              f" (reported error {err:.0f} = {err / exact * 100 if exact else 0:.2f}%)")
    if not ranks:
        return
    print(f"  kernels per process, exact: {kernels_per_process(e)}")
    print(f"  kernels per process, duty:  {kernels_per_process(d)}")
    last = None
    try:
        for line in open(f"{folder}/duty.log"):
            last = dict(kv.split("=", 1) for kv in line.split())
    except OSError:
        pass
    if last:
        print(f"  switch times (mean, last logged): attach {float(last['attach_ms']):.1f} ms,"
              f" detach {float(last['detach_ms']):.1f} ms")
    for p in o.get("processes", []):
        s = p.get("measured_slowdown")
        print(f"  pid {p['pid']}: measured slowdown {'none' if s is None else f'{s * 100:.2f}%'},"
              f" recent ratio {p['recent_ratio'] * 100:.2f}%")


if __name__ == "__main__":
    main()
