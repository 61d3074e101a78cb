# Compares eacgm's NCCL bus bandwidth from the hook's GPU times (`run --json`, nccl
# collectives' "gpu" sizes) with the same formula over the profiler's (CUPTI) kernel
# durations that tests/gpu/nccl_gpu_sweep.py wrote per rank: per collective and size,
# busbw = S x factor summed over the kernels / their durations summed, both ranks
# together (eacgm's row is per communicator). PASS within 10%.
# Usage: nccl_gpu_compare.py RUN_JSON OUT_DIR
import glob
import json
import os
import sys

run = json.load(open(sys.argv[1]))
ranks = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(sys.argv[2], "sweep_rank*.json")))]
world = ranks[0]["world"]
factor = {"AllReduce": 2 * (world - 1) / world, "AllGather": (world - 1) / world,
          "ReduceScatter": (world - 1) / world}
function = {"AllReduce": "ncclAllReduce", "AllGather": "ncclAllGather", "ReduceScatter": "ncclReduceScatter"}
prof = {}  # (kind, S) -> [sum of S x factor, sum of ns, kernels]
for r in ranks:
    for x in r["results"]:
        p = prof.setdefault((x["kind"], x["bytes"]), [0.0, 0.0, 0])
        k = x["kernel_ns"]
        # A call's kernels: its time counts, its bytes once.
        p[0] += x["bytes"] * factor[x["kind"]] * x["profiled_calls"]
        p[1] += sum(k)
        p[2] += len(k)
ours = {}  # (kind, S) -> (busbw, calls, p50, host busbw of the row)
rows = {c["function"]: c for c in run["nccl"]["collectives"] if c.get("gpu")}
for kind, fn in function.items():
    c = rows.get(fn)
    if not c:
        continue
    for s in c["gpu"]["sizes"]:
        ours[(kind, s["min_bytes"])] = (s["busbw_bytes_per_s"], s["calls"], s["p50_ns"], s["max_bytes"])
print(f"nccl unjoined kernels: {run['nccl'].get('gpu_unjoined')}")
print("| collective | S | calls (both ranks) | eacgm busbw GB/s | profiler busbw GB/s | ratio | result |")
print("|---|---|---|---|---|---|---|")
ok = True
worst = 0.0
for (kind, size) in sorted(prof, key=lambda k: (k[0], k[1])):
    pb, pns, pk = prof[(kind, size)]
    pbw = pb / pns * 1e9 if pns else None
    o = ours.get((kind, size))
    if o is None or o[0] is None or pbw is None:
        print(f"| {kind} | {size >> 20} MiB | - | - | {pbw and pbw / 1e9:.1f} | - | FAIL (no eacgm figure) |")
        ok = False
        continue
    ratio = o[0] / pbw
    calls = sum(x["calls"] for r in ranks for x in r["results"] if (x["kind"], x["bytes"]) == (kind, size))
    good = abs(ratio - 1) <= 0.10 and o[3] == size and o[1] == calls
    worst = max(worst, abs(ratio - 1))
    ok &= good
    print(f"| {kind} | {size >> 20} MiB | {o[1]} | {o[0] / 1e9:.1f} | {pbw / 1e9:.1f} | {ratio:.3f} | "
          f"{'PASS' if good else 'FAIL'} |")
for c in run["nccl"]["collectives"]:
    if c["function"] in rows:
        g = c["gpu"]
        print(f"INFO {c['function']}: calls {c['calls']}, gpu calls {g['calls']}, kernels {g['kernels']}, "
              f"idle starts {g['idle_starts']}, host busbw {c['busbw_bytes_per_s']}, gpu busbw {g['busbw_bytes_per_s']}")
print(f"worst |ratio - 1| = {worst:.3f}")
print("RESULT:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
