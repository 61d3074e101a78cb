#!/usr/bin/env bash
# NCCL across the GPUs of one machine (2+ GPUs), traced by eacgm, checked per rank.
# Usage: tests/gpu/run_nccl_check.sh BIN OUT_DIR
set -uo pipefail
BIN=$(readlink -f "$1")
OUT=$2
PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
mkdir -p "$OUT"
N=$(nvidia-smi -L | wc -l)
echo "== NCCL across $N GPUs"
"$BIN/eacgm" trace --probes nccl -o "$OUT/nccl.jsonl" -- \
  "$PY" -m torch.distributed.run --nproc_per_node "$N" tests/gpu/nccl_two_ranks.py "$OUT" 2> "$OUT/nccl.err"
echo "exit=$?"; grep -E "attached|done" "$OUT/nccl.err"
"$PY" tests/gpu/compare_nccl.py "$OUT/nccl.jsonl" "$OUT"
grep -m2 '"ncclAllReduce"' "$OUT/nccl.jsonl"

# eacgm run over the same job: each rank must have a process row on its own GPU, with
# its traced calls beside what NVML saw of it (the join by pid and device).
echo "== eacgm run: per-rank GPU rows"
mkdir -p "$OUT/run"
printf '[gpu]\ninterval_s = 0.2\n' > "$OUT/fast.toml"
"$BIN/eacgm" run --config "$OUT/fast.toml" --probes cuda,cuda_driver,nccl -- \
  "$PY" -m torch.distributed.run --nproc_per_node "$N" tests/gpu/nccl_two_ranks.py "$OUT/run" \
  > "$OUT/run.out" 2> "$OUT/run.err"
echo "exit=$?"
sed -n '/^gpu  name/,$p' "$OUT/run.out"
"$PY" - "$OUT" "$N" <<'PY'
import glob, json, os, sys
out, n = sys.argv[1], int(sys.argv[2])
ranks = [json.load(open(p)) for p in glob.glob(os.path.join(out, "run", "nccl_rank*.json"))]
text = open(os.path.join(out, "run.out")).read()
rows = {}
for line in text.split("pid  process")[-1].splitlines()[1:]:
    f = line.split()
    if len(f) == 9 and f[0].isdigit():
        rows.setdefault(int(f[0]), []).append(f)
ok = len(ranks) == n
for r in sorted(ranks, key=lambda r: r["rank"]):
    mine = rows.get(r["pid"], [])
    on_own = [f for f in mine if f[2] == str(r["rank"])]
    good = bool(on_own) and int(on_own[0][3]) > 0 and on_own[0][6] not in ("-", "0")
    ok &= good
    print(f"rank {r['rank']} pid {r['pid']}: rows {mine} -> {'ok' if good else 'FAIL'}")
print("RESULT:", "PASS" if ok else "FAIL")
PY
