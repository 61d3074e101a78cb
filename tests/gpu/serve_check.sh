#!/usr/bin/env bash
# Device check for `eacgm serve`: while a PyTorch job started by torchrun holds 3 GiB and
# runs matmuls, scrapes /metrics and compares the DCGM_FI_* values with nvidia-smi's
# (taken in the same second), checks the job's process series carry its rank labels, and
# that the traced launches are counted. Prints a table and PASS/FAIL per check.
#
# Usage: tests/gpu/serve_check.sh BIN_DIR [WORK_DIR]   (BIN_DIR holds eacgm; BIN_DIR/lib
#        the shared libraries it needs beyond the system's, if any)
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: serve_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-serve.XXXXXX)}"
PORT=${PORT:-9977}
mkdir -p "$WORK"
carry_libs "$BIN"

command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
need_torch_gpu

cat >"$WORK/job.py" <<'PY'
import os, sys, time, torch
seconds = float(sys.argv[1])
dev = torch.device("cuda:%d" % int(os.environ.get("LOCAL_RANK", "0")))
hold = torch.empty(3 * 1024**3, dtype=torch.uint8, device=dev)
a = torch.randn(4096, 4096, device=dev)
end = time.time() + seconds
while time.time() < end:
    for _ in range(20):
        c = a @ a
    torch.cuda.synchronize()
PY

"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" 2>"$WORK/serve.err" &
SERVE=$!
scrape() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
for _ in $(seq 100); do scrape /readyz >/dev/null 2>&1 && break; sleep 0.2; done
TORCHRUN="$(dirname "$PY")/torchrun"
"$TORCHRUN" --nproc_per_node 1 "$WORK/job.py" 30 >"$WORK/job.out" 2>&1 &
JOB=$!
smi() { nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw,clocks.sm,clocks.mem \
  --format=csv,noheader,nounits -i 0; }
# Steady state: the job holds its 3 GiB and has run matmuls for a few seconds.
for _ in $(seq 120); do
  used=$(smi | cut -d, -f2 | tr -d ' ')
  [ "${used:-0}" -gt 3000 ] && break
  sleep 0.25
done
sleep 4
# Three samples, each a scrape between two nvidia-smi readings: eacgm's value (its last
# pass, up to gpu.interval_s + 1 s old) must lie within what nvidia-smi saw around it.
for i in 1 2 3; do
  smi >"$WORK/smi.$i.csv"
  sleep 1
  scrape /metrics >"$WORK/metrics.$i.txt"
  sleep 1
  smi >>"$WORK/smi.$i.csv"
done
scrape /api/v1/processes >"$WORK/processes.json"
scrape /api/v1/kernels >"$WORK/kernels.json"
scrape /api/v1/memory >"$WORK/memory.json"
wait $JOB
sleep 1.5
scrape /metrics >"$WORK/metrics.end.txt"
kill -TERM $SERVE; wait $SERVE; echo "serve exit: $?" >>"$WORK/serve.err"

"$PY" - "$WORK" <<'PY'
import glob, json, os, re, sys
work = sys.argv[1]
def series(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name_labels, value = line.rsplit(" ", 1)
        m = re.match(r'([a-zA-Z_:][\w:]*)(\{(.*)\})?$', name_labels)
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out.setdefault(m.group(1), []).append((labels, float(value)))
    return out
ok = True
def check(name, cond, detail):
    global ok
    ok &= bool(cond)
    print(f"{'PASS' if cond else 'FAIL'}  {name:44s} {detail}")
print(f"{'':6s}{'field':44s} eacgm vs nvidia-smi (GPU 0, three samples)")
for i in (1, 2, 3):
    m = series(open(f"{work}/metrics.{i}.txt").read())
    rows = [[float(x) for x in r.split(", ")] for r in open(f"{work}/smi.{i}.csv").read().splitlines()]
    g = lambda n: next((v for l, v in m.get(n, []) if l.get("gpu") == "0"), None)
    def within(name, col, value, tol):
        lo, hi = min(r[col] for r in rows), max(r[col] for r in rows)
        check(f"[{i}] {name}", value is not None and lo - tol(lo) <= value <= hi + tol(hi),
              f"{value} vs nvidia-smi {lo:g}..{hi:g}")
    within("DCGM_FI_DEV_FB_USED MiB", 1, g("DCGM_FI_DEV_FB_USED"), lambda v: 16)
    within("DCGM_FI_DEV_GPU_UTIL %", 3, g("DCGM_FI_DEV_GPU_UTIL"), lambda v: 10)
    within("DCGM_FI_DEV_GPU_TEMP C", 4, g("DCGM_FI_DEV_GPU_TEMP"), lambda v: 3)
    within("DCGM_FI_DEV_POWER_USAGE W", 5, g("DCGM_FI_DEV_POWER_USAGE"), lambda v: 0.35 * v)
    within("DCGM_FI_DEV_SM_CLOCK MHz", 6, g("DCGM_FI_DEV_SM_CLOCK"), lambda v: 0.05 * v)
    within("DCGM_FI_DEV_MEM_CLOCK MHz", 7, g("DCGM_FI_DEV_MEM_CLOCK"), lambda v: 0.02 * v)
m = series(open(f"{work}/metrics.3.txt").read())
ranked = [(l, v) for l, v in m.get("eacgm_process_gpu_memory_bytes", []) if l.get("rank") == "0"]
check("process series labelled rank=0 (torchrun)", ranked and ranked[0][1] > 3 * 2**30,
      f"{[(l.get('pid'), l.get('comm'), l.get('rank'), l.get('world_size'), v / 2**20) for l, v in ranked]}")
procs = json.load(open(f"{work}/processes.json"))["processes"]
ranked_api = [p for p in procs if p.get("rank") == 0 and p["calls"] > 0]
check("/api/v1/processes: rank 0 with traced calls", ranked_api, str([(p["pid"], p["comm"], p["calls"], p["world_size"]) for p in ranked_api]))
end = series(open(f"{work}/metrics.end.txt").read())
launches = sum(v for l, v in end.get("eacgm_calls_total", []) if l["function"] in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx"))
check("launches counted (runtime + driver, nested out)", launches > 100, f"{launches:.0f}")
kernels = json.load(open(f"{work}/kernels.json"))["kernels"]
top = kernels[0] if kernels else {}
check("/api/v1/kernels: the job's kernels by name", kernels and sum(k["launches"] for k in kernels) > 100,
      f"{len(kernels)} kernels; top {top.get('name', '')[:60]!r} x{top.get('launches')} shapes {len(top.get('shapes', []))}")
memory = json.load(open(f"{work}/memory.json"))
rows = [r for r in memory.get("processes", []) if r.get("peak_bytes", 0) >= 3 * 2**30]
check("/api/v1/memory: the job's 3 GiB in its ledger", rows,
      str([(r.get("pid"), r.get("device"), r.get("live_bytes", 0) // 2**20, r.get("peak_bytes", 0) // 2**20) for r in rows]))
check("DCGM_FI_DRIVER_VERSION label", any("DCGM_FI_DRIVER_VERSION" in l for l, _ in end.get("DCGM_FI_DEV_GPU_TEMP", [])), "")
serve_err = open(f"{work}/serve.err").read()
check("SIGTERM: exit 0", "serve exit: 0" in serve_err, serve_err.strip().splitlines()[-1])
sys.exit(0 if ok else 1)
PY
