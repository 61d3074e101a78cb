"""Compares two `eacgm run --json --gpu-time` reports of the same workload: USUAL (the
process loads libcuda as usual, the driver's uprobes count its calls) and PRIVATE
(`--private-driver`: it runs a copy of libcuda the uprobes never reach). Exit status 1
unless:
- PRIVATE shows no call of the driver's functions (domain cuda_driver) at all;
- the hook's exact counts are the same in both: kernel launches per name and graph
  launches (the workloads are deterministic; not `compile`, whose autotuning differs from
  run to run: there the two are printed only);
- USUAL's probes saw as many launches as the hook counted: the launch and graph-launch
  calls not nested in another traced launch (a function's `calls` leave its nested
  calls out), the hook's own gap-measurement kernels (`eacgm_*`) left out, as
  tests/gpu/gpu_time_counts.py counts them.

Usage: private_driver_compare.py NAME USUAL.json PRIVATE.json
"""
import collections
import json
import re
import sys

LAUNCH = re.compile(r"^(cuda|cu)(Launch(Kernel|KernelExC|KernelEx|CooperativeKernel)(_v\d+)?|GraphLaunch)(_ptsz)?$")


def hook_counts(doc):
    out = collections.Counter()
    for k in doc.get("gpu_time", {}).get("kernels", []):
        out["graph launches" if k["graph"] else k["name"]] += k["launches"]
    return out


def main():
    name, usual_path, private_path = sys.argv[1:4]
    usual, private = json.load(open(usual_path)), json.load(open(private_path))
    driver_calls = {f["function"]: f["calls"] for f in private.get("functions", [])
                    if f.get("domain") == "cuda_driver" and f["calls"] > 0}
    hu, hp = hook_counts(usual), hook_counts(private)
    own = sum(r["count"] for r in usual["gpu_work"]["rows"]
              if r["kind"] == "kernel" and r.get("name", "").startswith("eacgm_"))
    probe = sum(f["calls"] for f in usual.get("functions", []) if LAUNCH.match(f["function"])) - own
    differ = {n: (hu.get(n, 0), hp.get(n, 0)) for n in set(hu) | set(hp) if hu.get(n, 0) != hp.get(n, 0)}
    print(f"{name}: {'':36} {'usual':>10} {'private':>10}")
    print(f"  {'launches the uprobes saw':<36} {probe:>10} {'':>10}")
    print(f"  {'driver calls the uprobes saw':<36} {'':>10} {sum(driver_calls.values()):>10}")
    print(f"  {'launches the hook counted':<36} {sum(hu.values()):>10} {sum(hp.values()):>10}")
    print(f"  {'kernel names (+ graphs)':<36} {len(hu):>10} {len(hp):>10}")
    ok = True
    if driver_calls:
        print(f"FAIL: {name}: driver functions seen with the private driver: {driver_calls}")
        ok = False
    if not hp:
        print(f"FAIL: {name}: the hook counted nothing with the private driver")
        ok = False
    elif differ and name != "compile":
        print(f"FAIL: {name}: the hook's counts differ (usual, private): {dict(list(differ.items())[:8])}")
        ok = False
    if probe != sum(hu.values()):
        print(f"FAIL: {name}: usual run: the uprobes saw {probe} launches, the hook counted {sum(hu.values())}")
        ok = False
    if ok:
        print(f"PASS: {name}: no driver uprobe reached the private run (the hook counted {sum(hp.values())} "
              f"launches); in the usual run the hook's {sum(hu.values())} equal the uprobes'")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
