#!/usr/bin/env bash
# NCCL analysis on 2 GPUs of one machine: nccl_straggler.py under `eacgm run --json`;
# checks the straggling rank, the arrival skew (2 ms typical, 0.5 s at the sleeping
# collective), the bandwidth rows and the anomaly of rank 0's wait for the sleeper.
# With EACGM_RUN_ARGS=--gpu-time, also that every all-reduce's kernel was timed on the GPU.
# Usage: tests/gpu/nccl_analysis_check.sh EACGM_BINARY OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
EACGM=$(readlink -f "$1")
OUT=$2
PY=${PY:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
nvidia-smi -L
"$EACGM" run --json --no-gpu ${EACGM_RUN_ARGS:-} --probes cuda,cuda_driver,nccl -- \
  "$PY" -m torch.distributed.run --nproc_per_node 2 "$here/nccl_straggler.py" "$OUT" > "$OUT/run.json" 2> "$OUT/run.err"
echo "eacgm exit $?"
grep -E "^eacgm: (tracing|done)" "$OUT/run.err"
"$PY" - "$OUT" "${EACGM_RUN_ARGS:-}" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
gpu_time = "--gpu-time" in sys.argv[2]
doc = json.load(open(os.path.join(out, "run.json")))
ranks = {r["rank"]: r for r in (json.load(open(p)) for p in glob.glob(os.path.join(out, "straggler_rank*.json")))}
ok = True
def check(name, cond, detail):
    global ok
    ok &= bool(cond)
    print(f"{'PASS' if cond else 'FAIL'} {name}: {detail}")
n = doc["nccl"]
for c in n["collectives"]:
    if c["function"] == "ncclAllReduce":
        print(f"INFO allreduce comm {c['comm_id']}: calls {c['calls']}, bytes {c['bytes']}, p50 {c['p50_ns']} ns,"
              f" algbw {c['algbw_bytes_per_s']}, busbw {c['busbw_bytes_per_s']}")
        if gpu_time:
            g = c.get("gpu") or {}
            check("every all-reduce timed on the GPU", g.get("calls") == c["calls"],
                  f"gpu calls {g.get('calls')} of {c['calls']}, p50 {g.get('p50_ns')} ns, "
                  f"busbw {g.get('busbw_bytes_per_s')}, unjoined {n.get('gpu_unjoined')}")
comms = [c for c in n["communicators"] if c.get("instances", 0) >= 250]
check("communicator matched", comms, f"{[(c['comm_id'], c['instances'], c['local_ranks']) for c in n['communicators']]}")
for c in comms:
    check("straggler is rank 1", c["straggler"] == 1, f"straggler {c['straggler']}, ranks " +
          "; ".join(f"rank {r['rank']} pid {r['pid']} last {r['last']}/{r['instances']} mean lateness "
                    f"{(r['mean_lateness_ns'] or 0) / 1e6:.2f} ms" for r in c["ranks"]))
    check("skew p50 ~2 ms", 1.5e6 <= (c["skew_p50_ns"] or 0) <= 20e6, f"p50 {c['skew_p50_ns']} ns")
    check("skew max ~0.5 s", 0.45e9 <= (c["skew_max_ns"] or 0) <= 1.0e9, f"max {c['skew_max_ns']} ns")
a = doc["anomalies"]
pid0 = ranks[0]["pid"]
waits = [x for x in a["calls"] if x["pid"] == pid0 and x["dur_ns"] >= 0.4e9]
check("rank 0's wait for the sleeper flagged", waits,
      "; ".join(f"{x['domain']}:{x['name']} {x['dur_ns'] / 1e6:.0f} ms sampled={x['sampled']}" for x in waits))
print(f"INFO anomalies total {a['total']}, intervals {a['interval_total']}: " +
      "; ".join(f"pid {x['pid']} {x['name']} {x['dur_ns'] / 1e6:.2f} ms x{x['dur_ns'] / max(x['median_ns'], 1):.0f}"
                for x in a["calls"][:10]))
w = doc.get("waits", {})
for p in w.get("processes", [])[:4]:
    print("INFO waits", json.dumps(p)[:300])
print("RESULT:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
