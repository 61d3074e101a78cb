#!/usr/bin/env bash
# Device check for the workload in the history: `eacgm serve` keeps a short PyTorch
# training run, started as step 0 of a Slurm job (SLURM_JOB_ID, SLURM_STEP_ID in its
# environment), in a new SQLite file (of the build's schema version, src/history/schema.h kSchemaVersion: 13); `eacgm history --json` shows the
# training process with its job and step, and the text table a job column. Prints a table
# and PASS/FAIL per check. The job comes from ProcessFacts::workload, which reads the
# process's environment.
#
# Usage: tests/gpu/history_workload_check.sh BIN_DIR [WORK_DIR]
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: history_workload_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-workload.XXXXXX)}"
PORT=${PORT:-9979}
JOB="gpu-check-$$"
mkdir -p "$WORK"
carry_libs "$BIN"
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
need_torch_gpu

STORE="sqlite:$WORK/eacgm.db"
printf '[store]\ninterval_s = 2\n' >"$WORK/eacgm.toml"
cat >"$WORK/train.py" <<'PY'
import sys, time, torch
dev = torch.device("cuda:0")
model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 2048, device=dev)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
torch.cuda.synchronize()
PY
scrape() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" --config "$WORK/eacgm.toml" --store "$STORE" --node gpu-box \
  2>>"$WORK/serve.err" &
SERVE=$!
for _ in $(seq 150); do scrape /readyz >/dev/null 2>&1 && break; sleep 0.2; done
SLURM_JOB_ID="$JOB" SLURM_STEP_ID=0 RANK=0 WORLD_SIZE=1 "$PY" "$WORK/train.py" 12 >"$WORK/train.out" 2>&1
sleep 6  # the exit is found and written
kill -TERM $SERVE; wait $SERVE
"$BIN/eacgm" history --store "$STORE" --since 10m --json >"$WORK/history.json" 2>"$WORK/history.err"
"$BIN/eacgm" history --store "$STORE" --since 10m >"$WORK/history.txt" 2>>"$WORK/history.err"
"$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = \"schema_version\"").fetchone()[0])' \
  "$WORK/eacgm.db" >"$WORK/version.txt"

"$PY" - "$WORK" "$JOB" <<'PY'
import json, sys
work, job = sys.argv[1], sys.argv[2]
doc = json.load(open(f"{work}/history.json"))
text = open(f"{work}/history.txt").read()
trainer = [p for p in doc["processes"] if "train.py" in p["cmdline"] and p["calls"] > 0]
header = next((l for l in text.splitlines() if l.startswith("node ")), "")
checks = [
    ("schema version of a new file", open(f"{work}/version.txt").read().strip(),
     open(f"{work}/version.txt").read().strip() == "14"),
    ("the training process with its calls", [(p["pid"], p["calls"]) for p in trainer], len(trainer) == 1),
    ("its job and step", [(p["job"], p["job_step"]) for p in trainer],
     any(p["job"] == job and p["job_step"] == "0" for p in trainer)),
    ("text table's job column", header.split()[-1:] + [f"{job}.0" in text], header.split()[-1:] == ["job"] and f"{job}.0" in text),
]
failed = 0
print(f"{'check':<40} {'value':<46} result")
for name, value, ok in checks:
    failed += not ok
    print(f"{name:<40} {str(value)[:46]:<46} {'PASS' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)
PY
