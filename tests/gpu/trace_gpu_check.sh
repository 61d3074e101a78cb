#!/usr/bin/env bash
# Device check for GPU samples beside a trace: traces a PyTorch job with
# `eacgm trace` (JSON Lines) and `eacgm run` while nvidia-smi polls the job's memory, and
# checks the join: the job's process lines carry its pid, which made the traced calls,
# and its GPU memory agrees with nvidia-smi's. Then measures the sampling pass's CPU
# over the passes of `eacgm gpu --watch` (pass 0, NVML's warm-up, reported apart).
#
# Usage: tests/gpu/trace_gpu_check.sh BIN_DIR [WORK_DIR]   (BIN_DIR holds eacgm)
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch.
set -euo pipefail

BIN="${1:?usage: trace_gpu_check.sh BIN_DIR [WORK_DIR]}"
EACGM="$(cd "$BIN" && pwd)/eacgm"
WORK="${2:-$(mktemp -d /tmp/eacgm-trace-gpu.XXXXXX)}"
TORCH_PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"
mkdir -p "$WORK"

skip() { echo "SKIP: $*" >&2; exit 77; }
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
[[ -x "$TORCH_PY" ]] || skip "$TORCH_PY not found"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"

# The job: 3 GiB held for its whole life, matmuls for SECONDS.
cat >"$WORK/job.py" <<'PY'
import sys, time, torch
seconds = float(sys.argv[1])
dev = torch.device("cuda:0")
hold = torch.empty(3 * 1024**3, dtype=torch.uint8, device=dev)
a = torch.randn(4096, 4096, device=dev)
end = time.time() + seconds
while time.time() < end:
    for _ in range(20):
        c = a @ a
    torch.cuda.synchronize()
PY
printf '[gpu]\ninterval_s = 0.5\n' >"$WORK/eacgm.toml"

poll_smi() {  # pid,used MiB of every compute app, once a second, until killed
  while true; do
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >>"$1" 2>/dev/null || true
    sleep 1
  done
}

poll_smi "$WORK/smi_trace.csv" &
SMI=$!
"$EACGM" trace --config "$WORK/eacgm.toml" --probes cuda,cuda_driver -o "$WORK/trace.jsonl" \
  -- "$TORCH_PY" "$WORK/job.py" 8 2>"$WORK/trace.err" || { cat "$WORK/trace.err"; exit 1; }
kill $SMI; wait $SMI 2>/dev/null || true

poll_smi "$WORK/smi_run.csv" &
SMI=$!
"$EACGM" run --config "$WORK/eacgm.toml" --probes cuda,cuda_driver -- "$TORCH_PY" "$WORK/job.py" 8 \
  >"$WORK/run.out" 2>"$WORK/run.err" || { cat "$WORK/run.err"; exit 1; }
kill $SMI; wait $SMI 2>/dev/null || true

# Every pass of a 30-pass watch, pass 0 (NVML warm-up, first slow-field round) included.
"$EACGM" gpu --watch --json --processes --interval 0.2 --count 30 >"$WORK/watch.jsonl"

grep -E "tracing|done|no GPU" "$WORK/trace.err" | sed 's/^/  /'
echo "--- eacgm run (GPU part)"
sed -n '/^gpu  name/,$p' "$WORK/run.out"

"$TORCH_PY" - "$WORK" <<'PY'
import collections, json, os, statistics, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(os.path.join(work, "trace.jsonl")) if l.strip()]
calls = collections.Counter(l["pid"] for l in lines if l["domain"] != "gpu")
devices = [l for l in lines if l["domain"] == "gpu" and l["name"] == "device"]
procs = [l for l in lines if l["domain"] == "gpu" and l["name"] == "process"]
smi = collections.defaultdict(int)
for row in open(os.path.join(work, "smi_trace.csv")):
    parts = [p.strip() for p in row.split(",")]
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
        smi[int(parts[0])] = max(smi[int(parts[0])], int(parts[1]))
rows, fail = [], False
def check(name, ok, detail):
    global fail
    fail |= not ok
    rows.append((name, "ok" if ok else "FAIL", detail))
job = max(calls, key=calls.get) if calls else None
check("traced calls from the job", job is not None and calls[job] > 100, f"pid {job}: {calls.get(job, 0)} calls")
check("device lines (passes x GPUs)", len(devices) >= 10, f"{len(devices)} lines")
busy = [d["gpu"]["utilization_gpu_percent"] for d in devices if d["gpu"]["index"] == 0 and d["gpu"]["utilization_gpu_percent"] is not None]
check("GPU 0 busy while traced", max(busy, default=0) >= 50, f"utilization max {max(busy, default=0)}%")
pids = {p["pid"] for p in procs}
check("process lines only for traced pids", pids and pids <= set(calls), f"process pids {sorted(pids)}, traced {sorted(calls)}")
mem = max((p["process"]["used_memory_bytes"] or 0) for p in procs if p["pid"] == job) if procs else 0
check("job memory = nvidia-smi (MiB)", job in smi and mem // 2**20 == smi[job],
      f"eacgm {mem // 2**20} MiB, nvidia-smi {smi.get(job)} MiB")
sm = [p["process"]["sm_utilization_percent"] for p in procs if p["pid"] == job and p["process"]["sm_utilization_percent"] is not None]
check("job SM utilization reported", bool(sm) and max(sm) >= 50, f"max {max(sm, default=None)}%, {len(sm)} samples")
# eacgm run: the process row with the most calls must sit on GPU 0 with nvidia-smi's memory.
smi_run = collections.defaultdict(int)
for row in open(os.path.join(work, "smi_run.csv")):
    parts = [p.strip() for p in row.split(",")]
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
        smi_run[int(parts[0])] = max(smi_run[int(parts[0])], int(parts[1]))
table = open(os.path.join(work, "run.out")).read().split("pid  process")[-1].splitlines()[1:]
prow = [r.split() for r in table if r.strip() and r.split()[0].isdigit() and len(r.split()) == 9]
top = max(prow, key=lambda r: int(r[3])) if prow else None
check("run: top process on GPU 0 with nvidia-smi's memory",
      top is not None and top[2] == "0" and int(top[3]) > 100 and int(top[6]) == smi_run.get(int(top[0])),
      f"row {top}, nvidia-smi {smi_run.get(int(top[0])) if top else None} MiB")
passes = [json.loads(l) for l in open(os.path.join(work, "watch.jsonl")) if l.strip()]
# Pass 0 is the first use of each NVML query in the process (driver warm-up, once).
cpu0 = passes[0]["pass_cpu_seconds"] * 1e6 if passes else 0
cpu = sorted(p["pass_cpu_seconds"] * 1e6 for p in passes[1:])
check("pass CPU, passes 1.. (<= 5000 us)", bool(cpu) and cpu[-1] <= 5000,
      f"median {statistics.median(cpu):.0f} us, max {cpu[-1]:.0f} us of {len(cpu)}; pass 0 {cpu0:.0f} us")
energy = [p["gpus"][0]["energy_total_millijoules"] for p in passes]
check("energy counter present from pass 0", all(e is not None for e in energy), f"{energy[0]} .. {energy[-1]} mJ")
w = max(len(r[0]) for r in rows)
for name, status, detail in rows:
    print(f"{name:<{w}}  {status:<4}  {detail}")
print("RESULT:", "FAIL" if fail else "PASS")
sys.exit(1 if fail else 0)
PY
