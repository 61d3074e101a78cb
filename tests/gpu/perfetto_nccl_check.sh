#!/usr/bin/env bash
# `eacgm trace --format perfetto` of two NCCL ranks on two GPUs (GPU machine with 2 GPUs,
# root): nccl_straggler.py under torchrun; the timeline must show both rank processes,
# named, each with its all-reduces as complete events that carry the communicator's
# rank and size, and rank 1's 0.5 s late arrival as the longest gap between its calls.
# Usage: tests/gpu/perfetto_nccl_check.sh EACGM OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
EACGM=$(readlink -f "$1") OUT=$2
PY=${PY:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
"$EACGM" trace --probes cuda,cuda_driver,nccl --format perfetto -o "$OUT/nccl.json" -- \
  "$PY" -m torch.distributed.run --nproc_per_node 2 "$here/nccl_straggler.py" "$OUT" 2> "$OUT/trace.err"
echo "eacgm exit $?; $(grep -o 'done.*' "$OUT/trace.err" | head -1)"
"$PY" - "$OUT" <<'PY'
import collections, glob, json, os, sys
out = sys.argv[1]
doc = json.load(open(os.path.join(out, "nccl.json")))
ranks = {r["pid"]: r["rank"] for r in (json.load(open(p)) for p in glob.glob(os.path.join(out, "straggler_rank*.json")))}
ev = doc["traceEvents"]
ok = True
def check(name, cond, detail=""):
    global ok
    ok &= bool(cond)
    print(("PASS " if cond else "FAIL ") + name + (": " + str(detail) if detail != "" else ""))
named = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
check("both ranks' processes are named", set(ranks) <= set(named), {p: named.get(p) for p in ranks})
ar = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X" and e["name"] == "ncclAllReduce":
        ar[e["pid"]].append(e)
for pid, rank in sorted(ranks.items()):
    calls = ar.get(pid, [])
    check(f"rank {rank} (pid {pid}): its all-reduces", len(calls) >= 301, len(calls))
    tagged = [c for c in calls if c["args"]["args"].get("rank") == rank and c["args"]["args"].get("nranks") == 2]
    check(f"rank {rank}: all-reduces carry rank {rank} of 2", len(tagged) == len(calls) and calls, f"{len(tagged)} of {len(calls)}")
    starts = sorted(c["ts"] for c in calls)
    gap = max((b - a for a, b in zip(starts, starts[1:])), default=0)
    print(f"rank {rank}: longest gap between all-reduces {gap / 1000:.1f} ms")
    if rank == 1:
        check("rank 1's longest gap is its 0.5 s sleep", 490_000 < gap < 700_000, f"{gap / 1000:.1f} ms")
print("RESULT", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
