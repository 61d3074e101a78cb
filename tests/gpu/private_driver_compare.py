"""Compares two `eacgm run --json --gpu-time` reports of the same workload: USUAL (the
process loads libcuda as usual, the driver's uprobes count its calls) and PRIVATE
(`--private-driver`: it runs a copy of libcuda the uprobes never reach, and its hook counts
its driver calls). Exit status 1 unless:
- every driver function (domain cuda_driver) PRIVATE shows is one the hook wraps
  (src/govern/hookcore/hooked_functions.def): no uprobe reached the copy;
- the hook's driver calls in PRIVATE equal USUAL's probes' (calls and nested calls) per
  function, launches left out (below; not `compile`, whose autotuning differs from run to
  run). Bytes are not compared: a probe's leave nested calls out;
- PRIVATE's launch calls add up to the launches the hook counted per kernel;
- the hook's exact counts are the same in both: kernel launches per name and graph
  launches (not `compile`);
- the host waits of every CUDA kind (stream, event and device synchronisations, blocking
  copies) are as many in PRIVATE as in USUAL, and timed (not `compile`): the runtime's
  probes still reach PRIVATE's runtime calls, and the hook times the driver's waits;
- the memory ledger is the same in both (allocations, frees, bytes allocated, peak bytes,
  unknown frees, leaks; not `compile`): PRIVATE's driver allocations come from its hook
  one by one, and each memory function's calls and nested calls (those libcudart made) are
  as many as the probes' in USUAL;
- USUAL's probes saw as many launches as the hook counted: the launch and graph-launch
  calls not nested in another traced launch (a function's `calls` leave its nested
  calls out), the hook's own gap-measurement kernels (`eacgm_*`) left out, as
  tests/gpu/gpu_time_counts.py counts them.

Usage: private_driver_compare.py NAME USUAL.json PRIVATE.json
"""
import collections
import json
import os
import re
import sys

LAUNCH = re.compile(r"^(cuda|cu)(Launch(Kernel|KernelExC|KernelEx|CooperativeKernel)(_v\d+)?|GraphLaunch)(_ptsz)?$")


def hook_counts(doc):
    out = collections.Counter()
    for k in doc.get("gpu_time", {}).get("kernels", []):
        out["graph launches" if k["graph"] else k["name"]] += k["launches"]
    return out


HOOKED = set(re.findall(r"EACGM_DRIVER\((\w+),", open(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "../../src/govern/hookcore/hooked_functions.def")).read()))


def driver_rows(doc):
    """Per driver function: (calls, nested calls included, bytes)."""
    return {f["function"]: (f["calls"] + f.get("nested", 0), f.get("bytes") or 0)
            for f in doc.get("functions", []) if f.get("domain") == "cuda_driver" and f["calls"] + f.get("nested", 0) > 0}


MEMORY = re.compile(r"^cuMem(Alloc|Free|Create$|Release$|HostAlloc$)")
LEDGER = ("allocations", "frees", "allocated_bytes", "peak_bytes", "unknown_frees", "leaks", "leaked_bytes")


def ledger(doc):
    """The memory ledger, every process and device summed (peak: the largest)."""
    out = dict.fromkeys(LEDGER, 0)
    for r in doc.get("memory", {}).get("processes", []):
        for k in ("allocations", "frees", "allocated_bytes", "unknown_frees"):
            out[k] += r[k]
        out["peak_bytes"] = max(out["peak_bytes"], r["peak_bytes"])
        out["leaks"] += r["leaks"]["count"]
        out["leaked_bytes"] += r["leaks"]["bytes"]
    return out


def memory_rows(doc):
    """Per memory driver function: (calls, nested)."""
    return {f["function"]: (f["calls"], f.get("nested", 0)) for f in doc.get("functions", [])
            if f.get("domain") == "cuda_driver" and MEMORY.match(f["function"])}


CUDA_WAITS = ("stream_sync", "event_sync", "device_sync", "blocking_copy")


def waits(doc):
    """Per CUDA wait kind: [calls, timed, total_ns], every process summed."""
    out = collections.defaultdict(lambda: [0, 0, 0.0])
    for p in doc.get("waits", {}).get("processes", []):
        for w in p["waits"]:
            if w["kind"] in CUDA_WAITS:
                out[w["kind"]][0] += w["calls"]
                out[w["kind"]][1] += w["timed"]
                out[w["kind"]][2] += w["total_ns"] or 0
    return out


def main():
    name, usual_path, private_path = sys.argv[1:4]
    usual, private = json.load(open(usual_path)), json.load(open(private_path))
    pr, ur = driver_rows(private), driver_rows(usual)
    driver_calls = {f: n for f, (n, _) in pr.items() if f not in HOOKED}
    calls_differ = {f: (ur.get(f, (0, 0)), pr.get(f, (0, 0))) for f in (set(pr) | set(ur)) & HOOKED
                    if not LAUNCH.match(f) and ur.get(f, (0, 0))[0] != pr.get(f, (0, 0))[0]}
    private_launches = sum(n for f, (n, _) in pr.items() if LAUNCH.match(f))
    hu, hp = hook_counts(usual), hook_counts(private)
    own = sum(r["count"] for r in usual["gpu_work"]["rows"]
              if r["kind"] == "kernel" and r.get("name", "").startswith("eacgm_"))
    probe = sum(f["calls"] for f in usual.get("functions", []) if LAUNCH.match(f["function"])) - own
    differ = {n: (hu.get(n, 0), hp.get(n, 0)) for n in set(hu) | set(hp) if hu.get(n, 0) != hp.get(n, 0)}
    print(f"{name}: {'':36} {'usual':>10} {'private':>10}")
    print(f"  {'launches the uprobes saw':<36} {probe:>10} {'':>10}")
    print(f"  {'driver calls the uprobes saw':<36} {'':>10} {sum(driver_calls.values()):>10}")
    print(f"  {'driver calls, hook or uprobes':<36} {sum(n for n, _ in ur.values()):>10} "
          f"{sum(n for n, _ in pr.values()):>10}")
    print(f"  {'  of them launches':<36} {'':>10} {private_launches:>10}")
    print(f"  {'launches the hook counted':<36} {sum(hu.values()):>10} {sum(hp.values()):>10}")
    print(f"  {'kernel names (+ graphs)':<36} {len(hu):>10} {len(hp):>10}")
    wu, wp = waits(usual), waits(private)
    for kind in sorted(set(wu) | set(wp)):
        u, p = wu[kind], wp[kind]
        print(f"  {'waits, ' + kind + ' (calls / ms)':<36} {u[0]:>5}/{u[2] / 1e6:<6.1f} {p[0]:>5}/{p[2] / 1e6:<6.1f}")
    lu, lp = ledger(usual), ledger(private)
    for k in LEDGER:
        print(f"  {'memory, ' + k:<36} {lu[k]:>10} {lp[k]:>10}")
    ledger_differ = {k: (lu[k], lp[k]) for k in LEDGER if lu[k] != lp[k]}
    mu, mp = memory_rows(usual), memory_rows(private)
    for f in sorted(set(mu) | set(mp)):
        u, p = mu.get(f, (0, 0)), mp.get(f, (0, 0))
        print(f"  {f + ' (calls / nested)':<36} {u[0]:>5}/{u[1]:<4} {p[0]:>5}/{p[1]:<4}")
    memory_differ = {f: (mu.get(f), mp.get(f)) for f in set(mu) | set(mp) if mu.get(f, (0, 0)) != mp.get(f, (0, 0))}
    waits_differ = {k: (wu[k][0], wp[k][0]) for k in set(wu) | set(wp) if wu[k][0] != wp[k][0]}
    untimed = {k: wp[k] for k in wp if wp[k][0] > 0 and (wp[k][1] == 0 or wp[k][2] <= 0)}
    ok = True
    if waits_differ and name != "compile":
        print(f"FAIL: {name}: host waits differ (usual, private): {waits_differ}")
        ok = False
    if ledger_differ and name != "compile":
        print(f"FAIL: {name}: the memory ledgers differ (usual, private): {ledger_differ}")
        ok = False
    if lu["allocations"] == 0 and name != "compile":
        print(f"FAIL: {name}: no allocation in the usual run's ledger")
        ok = False
    if memory_differ and name != "compile":
        print(f"FAIL: {name}: memory calls (calls, nested) differ (usual, private): {memory_differ}")
        ok = False
    if untimed:
        print(f"FAIL: {name}: host waits without a time in the private run: {untimed}")
        ok = False
    if driver_calls:
        print(f"FAIL: {name}: driver functions seen with the private driver: {driver_calls}")
        ok = False
    if not hp:
        print(f"FAIL: {name}: the hook counted nothing with the private driver")
        ok = False
    elif differ and name != "compile":
        print(f"FAIL: {name}: the hook's counts differ (usual, private): {dict(list(differ.items())[:8])}")
        ok = False
    if calls_differ and name != "compile":
        print(f"FAIL: {name}: the hook's driver calls differ from the probes' (usual, private): "
              f"{dict(list(calls_differ.items())[:8])}")
        ok = False
    if private_launches != sum(hp.values()):
        print(f"FAIL: {name}: the hook's launch calls ({private_launches}) differ from its kernels' "
              f"launches ({sum(hp.values())})")
        ok = False
    if probe != sum(hu.values()):
        print(f"FAIL: {name}: usual run: the uprobes saw {probe} launches, the hook counted {sum(hu.values())}")
        ok = False
    if ok:
        print(f"PASS: {name}: no driver uprobe reached the private run (the hook counted {sum(hp.values())} "
              f"launches and {sum(n for n, _ in pr.values())} driver calls, as the usual run's probes); "
              f"in the usual run the hook's {sum(hu.values())} launches equal the uprobes'")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
