#!/usr/bin/env bash
# Device check: rank labels under `eacgm serve` for a job of two ranks started by torchrun
# (both on GPU 0 when the machine has one): /api/v1/processes lists each worker with its
# rank, local_rank and world_size, and its /metrics series carry them. When a worker's
# labels are missing, prints what /proc says of it (the environment's rank variables, its
# pid namespace) beside what eacgm said, so the cause can be read off.
#
# Usage: tests/gpu/serve_ranks_check.sh BIN_DIR [WORK_DIR]   (BIN_DIR/lib: extra libraries)
# Exit status: 0 pass, 1 fail, 77 no GPU/PyTorch.
set -uo pipefail
BIN="$(cd "${1:?usage: serve_ranks_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-ranks.XXXXXX)}"
PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"
PORT=${PORT:-9978}
mkdir -p "$WORK"
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ -x "$PY" ]] || { echo "SKIP: $PY not found"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }

cat >"$WORK/ranks_job.py" <<'PY'
import os, sys, time, torch
dev = torch.device("cuda:%d" % (int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count()))
a = torch.randn(1024, 1024, device=dev)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(10):
        a = (a @ a).tanh()
    torch.cuda.synchronize()
PY

"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" 2>"$WORK/serve.err" &
SERVE=$!
get() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
for _ in $(seq 100); do get /readyz >/dev/null 2>&1 && break; sleep 0.2; done
"$(dirname "$PY")/torchrun" --nproc_per_node 2 "$WORK/ranks_job.py" 20 >"$WORK/job.out" 2>&1 &
JOB=$!
sleep 12
get /api/v1/processes >"$WORK/processes.json"
get /metrics >"$WORK/metrics.txt"
for pid in $(pgrep -f ranks_job.py); do
  echo "pid $pid: $(tr '\0' ' ' </proc/$pid/cmdline | cut -c1-80)"
  echo "  environ: $(tr '\0' '\n' </proc/$pid/environ 2>&1 | grep -E '^(RANK|LOCAL_RANK|WORLD_SIZE|TORCHELASTIC_RUN_ID)=' | tr '\n' ' ')"
  echo "  $(grep -E '^NSpid' /proc/$pid/status)"
done >"$WORK/proc.txt"
wait $JOB
kill -TERM $SERVE; wait $SERVE
cat "$WORK/proc.txt"

"$PY" - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
procs = json.load(open(f"{work}/processes.json"))["processes"]
workers = [p for p in procs if "ranks_job.py" in (p.get("cmdline") or "") and "torchrun" not in (p.get("cmdline") or "")]
print(f"{'pid':>8} {'comm':<16} {'rank':>5} {'local':>5} {'world':>5}  calls")
for p in workers:
    print(f"{p['pid']:>8} {p['comm'] or '-':<16} {str(p.get('rank')):>5} {str(p.get('local_rank')):>5} {str(p.get('world_size')):>5}  {p['calls']}")
ok = len(workers) == 2 and sorted(p.get("rank") for p in workers) == [0, 1] and all(p.get("world_size") == 2 for p in workers)
print(("PASS" if ok else "FAIL") + ": both workers listed with rank 0 and 1, world_size 2")
metrics = open(f"{work}/metrics.txt").read()
ranked = set()
for p in workers:
    for line in metrics.splitlines():
        if line.startswith("eacgm_process_calls_total{") and f'pid="{p["pid"]}"' in line:
            m = re.search(r'rank="(\d+)"', line)
            if m: ranked.add(m.group(1))
ok2 = ranked == {"0", "1"}
print(("PASS" if ok2 else "FAIL") + f": /metrics eacgm_process_calls_total carries rank labels {sorted(ranked)}")
sys.exit(0 if ok and ok2 else 1)
PY
