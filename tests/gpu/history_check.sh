#!/usr/bin/env bash
# Device check for the history: `eacgm serve` keeps a short PyTorch training run (its
# launches, its process with its rank, the GPU's NVML figures) in a SQLite file; after the
# agent stops and starts again, `eacgm history` and /api/v1/history/* still show it, and
# the file passes PRAGMA integrity_check. The trainer carries the hook with GPU time on
# (libeacgm_hook.so, EACGM_GPU_TIME=1), so its kernels' GPU time is kept too (domain
# gpu_time). Prints a table and PASS/FAIL per check.
#
# Usage: tests/gpu/history_check.sh BIN_DIR [WORK_DIR]
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: history_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-history.XXXXXX)}"
PORT=${PORT:-9978}
mkdir -p "$WORK"
carry_libs "$BIN"
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
need_torch_gpu

STORE="sqlite:$WORK/eacgm.db"
printf '[store]\ninterval_s = 2\n[gpu]\ninterval_s = 0.5\n' >"$WORK/eacgm.toml"
cat >"$WORK/train.py" <<'PY'
import os, sys, time, torch
seconds = float(sys.argv[1])
dev = torch.device("cuda:%d" % int(os.environ.get("LOCAL_RANK", "0")))
model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 2048, device=dev)
steps = 0
end = time.time() + seconds
while time.time() < end:
    opt.zero_grad()
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    steps += 1
torch.cuda.synchronize()
print("steps", steps)
PY
scrape() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
start_serve() {
  "$BIN/eacgm" serve --listen "127.0.0.1:$PORT" --config "$WORK/eacgm.toml" --store "$STORE" --node gpu-box \
    2>>"$WORK/serve.err" &
  SERVE=$!
  for _ in $(seq 150); do scrape /readyz >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}
start_serve
TORCHRUN="$(dirname "$PY")/torchrun"
LD_PRELOAD="$BIN/libeacgm_hook.so" EACGM_GPU_TIME=1 \
  "$TORCHRUN" --nproc_per_node 1 "$WORK/train.py" 15 >"$WORK/train.out" 2>&1
sleep 6  # the exit is found and written
kill -TERM $SERVE; wait $SERVE; echo "serve exit: $?" >>"$WORK/serve.err"
# The agent is gone: the CLI reads the file; then a new agent serves it.
"$BIN/eacgm" history --store "$STORE" --since 10m --json >"$WORK/history.json" 2>"$WORK/history.err"
"$BIN/eacgm" history --store "$STORE" --since 10m >"$WORK/history.txt" 2>>"$WORK/history.err"
start_serve
scrape "/api/v1/history/functions?since=10m" >"$WORK/api_functions.json"
scrape "/api/v1/history/gpus?since=10m&step=10s" >"$WORK/api_gpus.json"
scrape "/metrics" >"$WORK/metrics.txt"
kill -TERM $SERVE; wait $SERVE
"$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' \
  "$WORK/eacgm.db" >"$WORK/integrity.txt"

"$PY" - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
doc = json.load(open(f"{work}/history.json"))
api = json.load(open(f"{work}/api_functions.json"))
gpus = json.load(open(f"{work}/api_gpus.json"))
fn = {(f["domain"], f["function"]): f for f in doc["functions"]}
launches = sum(f["calls"] for (d, name), f in fn.items() if "LaunchKernel" in name)
procs = [p for p in doc["processes"] if "train.py" in p["cmdline"] or p["comm"].startswith("python")]
trainer = [p for p in procs if p["calls"] > 0]
util = [p["utilization_max_percent"] for p in gpus["points"] if p["utilization_max_percent"] is not None]
api_launches = sum(f["calls"] for f in api["functions"] if "LaunchKernel" in f["function"])
gpu_rows = [f for f in doc["functions"] if f["domain"] == "gpu_time"]
gpu_launches = sum(f["calls"] for f in gpu_rows)
gpu_timed = sum(f["timed"] for f in gpu_rows)
top = max(gpu_rows, key=lambda f: f["calls"]) if gpu_rows else None
proc_calls = sum(p["calls"] for p in doc["processes"])
api_calls = sum(f["calls"] for f in doc["functions"] if f["domain"] != "gpu_time")
checks = [
    ("launches kept after the agent stopped", launches, launches > 1000),
    ("the training process, exited, with its rank", json.dumps([(p["pid"], p["rank"], p["exited"]) for p in trainer]),
     any(p["exited"] and p["rank"] == 0 for p in trainer)),
    ("restarted agent answers the same launches", api_launches, api_launches == launches),
    ("GPU points with utilization (NVML)", f"{len(util)} points, max {max(util) if util else None}%",
     len(util) >= 3 and max(util) > 0),
    ("p99 of the launches from merged sketches", [fn[k]["p99_ns"] for k in fn if "LaunchKernel" in k[1]][:2],
     all(fn[k]["p99_ns"] for k in fn if "LaunchKernel" in k[1])),
    ("file integrity after two agents", open(f"{work}/integrity.txt").read().strip(),
     open(f"{work}/integrity.txt").read().strip() == "ok"),
    ("GPU time kept: kernels, launches, timed", f"{len(gpu_rows)}, {gpu_launches}, {gpu_timed}",
     len(gpu_rows) >= 3 and gpu_launches > 1000 and gpu_timed > 0),
    ("GPU time p50 of the most launched kernel", f"{top['function'][:24]} {top['p50_ns']} ns" if top else None,
     bool(top) and (top["p50_ns"] or 0) > 0),
    ("processes' calls = API calls (GPU launches out)", f"{proc_calls} / {api_calls}", proc_calls == api_calls),
]
print(f"(uprobes' launch calls {launches}; the hook's launches {gpu_launches}, its own kernels not among them)")
failed = 0
print(f"{'check':<46} {'value':<40} result")
for name, value, ok in checks:
    failed += not ok
    print(f"{name:<46} {str(value)[:40]:<40} {'PASS' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)
PY
