#!/usr/bin/env bash
# Analysis on a real GPU, in one call (about 3 minutes): torch_leak_slow.py (a training
# loop with a 64 MiB leak, one injected ~0.75 s slow step and a known hot Python
# function) under `eacgm run --json`, always-on (the default) and per call with the
# torch catalog; compare_analysis.py checks the leak, the slow step's anomaly (and its
# op, per call) and the hot function's share of the Python samples. Then the Python
# sampler's cost: the same loop under `eacgm run` with --python-hz 99 and 0, interleaved
# rounds, median step time.
# Usage: tests/gpu/analysis_check.sh EACGM_BINARY OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
EACGM=$(readlink -f "$1")
OUT=$2
PY=${PY:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
status=0
echo "== leak, slow step, hot spots: always-on"
"$EACGM" run --json --no-gpu -- "$PY" "$here/torch_leak_slow.py" 300 200 > "$OUT/always_on.json" 2> "$OUT/always_on.err"
echo "eacgm exit $?"
python3 "$here/compare_analysis.py" "$OUT/always_on.json" "$OUT/always_on.err" || status=1
grep -A12 "^anomalies" "$OUT/always_on.err" | head -14
echo "== leak, slow step with its op: per call, torch catalog"
"$EACGM" run --json --no-gpu --mode per-call --probes cuda,cuda_driver,torch -- "$PY" "$here/torch_leak_slow.py" 300 200 \
  > "$OUT/per_call.json" 2> "$OUT/per_call.err"
echo "eacgm exit $?"
python3 "$here/compare_analysis.py" "$OUT/per_call.json" "$OUT/per_call.err" per-call || status=1
echo "== Python sampler cost: step time with --python-hz 99 vs 0 (3 rounds, interleaved)"
cat > "$OUT/steps.py" <<'PY'
import sys, time, torch
dev = torch.device("cuda")
model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024,
                                                                     batch_first=True), num_layers=2).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(16, 64, 256, device=dev)
def step():
    opt.zero_grad(set_to_none=True)
    loss = model(x).pow(2).mean(); loss.backward(); opt.step(); return loss
for _ in range(20): step()
torch.cuda.synchronize()
times = []
for _ in range(400):
    t = time.perf_counter(); step().item(); times.append(time.perf_counter() - t)
times.sort()
print(f"median_step_ms {times[len(times) // 2] * 1e3:.4f}")
PY
for round in 1 2 3; do
  for hz in 99 0; do
    "$EACGM" run --no-gpu --python-hz $hz -- "$PY" "$OUT/steps.py" > "$OUT/hz$hz.$round.err" 2>&1
    echo "round $round hz $hz $(grep -o 'median_step_ms [0-9.]*' "$OUT/hz$hz.$round.err")"
  done
done
exit $status
