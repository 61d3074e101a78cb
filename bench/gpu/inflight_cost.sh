#!/usr/bin/env bash
# Step-time cost of the calls-in-flight table on the GPU machine: the GPT-style loops of
# train_step.py (the overhead benchmark's) untraced, under `eacgm run` as it ships (the
# table on) and with `[hangs] in_flight = false` (the waiting calls' probes leave it
# alone, all else the same), as separate processes interleaved in rounds; medians per
# mode, ratios to untraced and the spread (the noise) of each.
# Usage: bench/gpu/inflight_cost.sh EACGM [ROUNDS] [STEPS] [SIZES]
set -uo pipefail
EACGM=$1 ROUNDS=${2:-5} STEPS=${3:-200} SIZES=${4:-"cpu gpu"}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
printf '[hangs]\nin_flight = false\n' >"$TMP/off.toml"
printf '[hangs]\nin_flight = true\n' >"$TMP/on.toml"
for size in $SIZES; do
  train=("$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS")
  for r in $(seq "$ROUNDS"); do
    "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.untraced"
    "$EACGM" run --no-gpu --json --config "$TMP/on.toml" -- "${train[@]}" >"$TMP/$size.on.$r.json" 2>"$TMP/$size.on.err"
    step_of <"$TMP/$size.on.err" >>"$TMP/$size.table"
    "$EACGM" run --no-gpu --json --config "$TMP/off.toml" -- "${train[@]}" >"$TMP/$size.off.$r.json" 2>"$TMP/$size.off.err"
    step_of <"$TMP/$size.off.err" >>"$TMP/$size.no-table"
  done
  base=$(median <"$TMP/$size.untraced")
  printf '%-4s %-9s %9s %8s %s\n' size mode step_ms ratio spread
  for mode in untraced no-table table; do
    m=$(median <"$TMP/$size.$mode")
    printf '%-4s %-9s %9s %8s %s\n' "$size" "$mode" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN{printf "%.4f", m/b}')" \
      "$(spread <"$TMP/$size.$mode")"
  done
  # The waiting calls per run that the table saw (synchronisations and blocking copies).
  "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
waits = ("Synchronize", "cudaMemcpy", "cuMemcpyDtoH", "cuMemcpyHtoD")
n = sum(f["calls"] for f in d["functions"] if any(w in f["function"] for w in waits) and "Async" not in f["function"])
print(sys.argv[2], "waiting calls in the last run (the table written at each):", n)' "$TMP/$size.on.$ROUNDS.json" "$size"
done
