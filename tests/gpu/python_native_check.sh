#!/usr/bin/env bash
# Device check of the Python stack sampler's native frames and of its window in `serve`:
# 1. `eacgm run --folded` on train_step.py's GPU-bound loop: the share of sampled stacks
#    that end in the traced CUDA call their thread was in, and the top such stacks;
# 2. `eacgm serve` while the loop runs: /api/v1/python's hot functions and the folded
#    stacks of /api/v1/python/folded.
# Usage: tests/gpu/python_native_check.sh EACGM   (PY: the torch interpreter; OUT: where to
# keep the folded stacks)
set -uo pipefail
EACGM=$1
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
TRAIN="$HERE/../../bench/gpu/train_step.py"
OUT=${OUT:-$(mktemp -d)}
"$EACGM" run --no-gpu --folded "$OUT/run.folded" -- "$PY" "$TRAIN" --size gpu --steps 200 >"$OUT/run.txt" 2>&1
echo "run: exit $?, $(grep -c . "$OUT/run.folded") folded stacks"
awk '{n=$NF; total+=n; split($0, f, ";"); last=f[length(f)]; if (last ~ /^\[cuda/ || last ~ /^\[nccl/) native+=n}
     END {printf "samples %d, ending in a traced call %d (%.1f%%)\n", total, native, total ? 100*native/total : 0}' "$OUT/run.folded"
echo "top stacks ending in a traced call (innermost frames):"
grep -E '\[(cuda|cuda_driver|nccl)\] [^;]* [0-9]+$' "$OUT/run.folded" | sort -t' ' -k2 -nr | head -5 |
  awk '{n=split($0, f, ";"); s=""; for (i=(n>3?n-2:1); i<=n; i++) s=s (s?" ; ":"") f[i]; print "  " s}'
grep -A8 "Python hot spots" "$OUT/run.txt" | head -12

printf '[serve]\nlisten = "127.0.0.1:19977"\n[python]\nwindow_s = 60\n' >"$OUT/serve.toml"
"$EACGM" serve --no-gpu --config "$OUT/serve.toml" >"$OUT/serve.out" 2>&1 &
serve=$!
sleep 3
"$PY" "$TRAIN" --size gpu --steps 300 >/dev/null 2>&1
"$PY" - <<'PYEOF'
import json, urllib.request
doc = json.load(urllib.request.urlopen("http://127.0.0.1:19977/api/v1/python"))
print("serve: sample_hz", doc.get("sample_hz"), "samples", doc.get("samples"), "processes", len(doc.get("processes", [])))
for p in doc.get("processes", [])[:1]:
    for f in p.get("functions", [])[:5]:
        print(f"  {f['function']:40s} self {f['self_share']:.3f} total {f['total_share']:.3f}")
folded = urllib.request.urlopen("http://127.0.0.1:19977/api/v1/python/folded").read().decode()
lines = [l for l in folded.splitlines() if l.strip()]
native = [l for l in lines if l.rsplit(" ", 1)[0].split(";")[-1].startswith("[cuda")]
print(f"serve folded: {len(lines)} stacks, {len(native)} ending in a CUDA call")
PYEOF
kill -INT "$serve"; wait "$serve"; tail -2 "$OUT/serve.out"
