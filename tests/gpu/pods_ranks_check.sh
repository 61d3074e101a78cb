#!/usr/bin/env bash
# Device check: attribution of a training job's ranks to their pod, job, rank and GPU
# under `eacgm serve`. A torchrun job of two ranks (one per GPU on a 2-GPU machine, both
# on GPU 0 otherwise) runs inside a Kubernetes-shaped cgroup (kubepods/burstable/
# pod<uid>/<container id>) under SLURM_JOB_ID/SLURM_STEP_ID, with the kubelet's log
# directories laid out for that pod under a folder of the check's (no kubelet socket):
# /api/v1/processes names each rank's pod, namespace, container, job, step, rank and GPU;
# /metrics has their per-process series by pod (no pid label) with rank and job, the
# NVML per-process series per GPU, and each GPU's eacgm_pod_gpu_share_ratio summing to its
# utilisation.
#
# Usage: tests/gpu/pods_ranks_check.sh BIN_DIR [WORK_DIR]   (BIN_DIR/lib: extra libraries)
# Exit status: 0 pass, 1 fail, 77 no GPU/PyTorch or no writable cgroup hierarchy.
set -uo pipefail
BIN="$(cd "${1:?usage: pods_ranks_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-pods.XXXXXX)}"
PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"
PORT=${PORT:-9976}
mkdir -p "$WORK"
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ -x "$PY" ]] || { echo "SKIP: $PY not found"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
GPUS=$(nvidia-smi -L | grep -c '^GPU')

UID_="5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0"
CID=$(printf 'c%.0s' $(seq 60))0042
ROOT=""
for r in /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do
  if mkdir -p "$r/kubepods/burstable/pod$UID_/$CID" 2>/dev/null && [ -e "$r/kubepods/burstable/pod$UID_/$CID/cgroup.procs" ]; then
    ROOT=$r; break
  fi
done
[ -n "$ROOT" ] || { echo "SKIP: no writable cgroup hierarchy"; exit 77; }
CG="$ROOT/kubepods/burstable/pod$UID_/$CID"
mkdir -p "$WORK/log/pods/ml_trainer-0_$UID_/pytorch" "$WORK/log/containers"
: >"$WORK/log/containers/trainer-0_ml_pytorch-$CID.log"
printf '[kubernetes]\nlog_root = "%s"\npod_resources_socket = "%s"\nrefresh_s = 2\n' "$WORK/log" "$WORK/no-kubelet.sock" >"$WORK/eacgm.toml"

cat >"$WORK/ranks_job.py" <<'PY'
import os, sys, time, torch
dev = torch.device("cuda:%d" % (int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count()))
torch.cuda.set_device(dev)  # no context on GPU 0 for rank 1
a = torch.randn(2048, 2048, device=dev)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(10):
        a = (a @ a).tanh()
    torch.cuda.synchronize()
PY

"$BIN/eacgm" serve --config "$WORK/eacgm.toml" --listen "127.0.0.1:$PORT" --store "sqlite:$WORK/eacgm.db" 2>"$WORK/serve.err" &
SERVE=$!
cleanup() {
  kill -TERM $SERVE 2>/dev/null; wait $SERVE 2>/dev/null
  rmdir "$CG" "$ROOT/kubepods/burstable/pod$UID_" 2>/dev/null
}
trap cleanup EXIT
get() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
for _ in $(seq 100); do get /readyz >/dev/null 2>&1 && break; sleep 0.2; done
sh -c "echo \$\$ > $CG/cgroup.procs && exec env SLURM_JOB_ID=8001 SLURM_STEP_ID=3 $(dirname "$PY")/torchrun --nproc_per_node 2 $WORK/ranks_job.py 30" >"$WORK/job.out" 2>&1 &
JOB=$!
sleep 20
get /api/v1/processes >"$WORK/processes.json"
get /metrics >"$WORK/metrics.txt"
wait $JOB
cat /proc/self/cgroup >"$WORK/self.cgroup"

"$PY" - "$WORK" "$UID_" "$CID" "$GPUS" <<'PY'
import json, re, sys
work, uid, cid, gpus = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
procs = [p for p in json.load(open(f"{work}/processes.json"))["processes"] if p.get("rank") is not None and p.get("calls", 0) > 0]
metrics = open(f"{work}/metrics.txt").read().splitlines()
results = []
def check(name, ok, seen):
    results.append((name, ok, seen))
ranks = sorted(procs, key=lambda p: p["rank"])
check("two ranks traced", len(ranks) == 2, [(p["pid"], p["rank"]) for p in ranks])
for p in ranks:
    want = {"pod": "trainer-0", "namespace": "ml", "container": "pytorch", "pod_uid": uid, "container_id": cid, "job": "8001", "job_step": "3"}
    got = {k: p.get(k) for k in want}
    check(f"rank {p['rank']}: pod, container, job", got == want, got)
    on = sorted(g["gpu"] for g in p.get("gpus", []))
    expect = [p["rank"]] if gpus >= 2 else [0]
    check(f"rank {p['rank']}: on GPU {expect}", set(expect) <= set(on), on)
def series(family, *parts):
    return [l for l in metrics if l.startswith(family + "{") and all(x in l for x in parts)]
for r in (0, 1):
    s = series("eacgm_process_calls_total", 'pod="trainer-0"', f'rank="{r}"', 'job="8001"', 'namespace="ml"')
    check(f"/metrics calls by pod, rank {r}", len(s) == 1 and "pid=" not in s[0], s[:1])
    g = r if gpus >= 2 else 0
    m = series("eacgm_process_gpu_memory_bytes", f'gpu="{g}"', f'rank="{r}"', 'pod="trainer-0"')
    check(f"/metrics NVML memory, GPU {g} rank {r}", len(m) == 1 and "pid=" not in m[0], m[:1])
for g in sorted({(r if gpus >= 2 else 0) for r in (0, 1)}):
    util = [float(l.rsplit(" ", 1)[1]) for l in series("DCGM_FI_DEV_GPU_UTIL", f'gpu="{g}"')]
    shares = [(l, float(l.rsplit(" ", 1)[1])) for l in series("eacgm_pod_gpu_share_ratio", f'gpu="{g}"')]
    mine = [v for l, v in shares if 'pod="trainer-0"' in l]
    ok = util and mine and abs(sum(v for _, v in shares) - util[0] / 100) < 1e-6
    check(f"GPU {g}: pod share {mine} of util {util}", bool(ok), [l for l, _ in shares])
w = max(len(n) for n, _, _ in results)
for name, ok, seen in results:
    print(f"{name:<{w}}  {'PASS' if ok else 'FAIL'}  {seen if not ok else ''}")
sys.exit(0 if all(ok for _, ok, _ in results) else 1)
PY
rc=$?
[ $rc -ne 0 ] && { echo "--- serve.err"; tail -20 "$WORK/serve.err"; echo "--- job.out"; tail -5 "$WORK/job.out"; }
exit $rc
