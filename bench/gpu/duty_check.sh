#!/usr/bin/env bash
# The always-on duty cycle on the GPU machine: train_step.py's loops in interleaved
# rounds, untraced, under always-on `eacgm run` with the default budget (1%) and
# `duty_cycle = true` (the counted probes are cycled when their entries alone are over it) and with the budget
# off (`[trace] budget = 0`: every call counted, exact). Prints the median step-time
# ratios, and the launch, copy and memset counts of the budgeted runs against the exact
# ones (each run is the same deterministic loop), with the error each estimate reports.
# Usage: bench/gpu/duty_check.sh EACGM [ROUNDS] [STEPS] [SIZES]   (PY: the torch interpreter)
set -uo pipefail
EACGM=$1 ROUNDS=${2:-3} STEPS=${3:-300} SIZES=${4:-"cpu gpu"}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
printf '[trace]\nbudget = 0\n' >"$TMP/exact.toml"
printf '[trace]\nduty_cycle = true\n' >"$TMP/duty.toml"
for size in $SIZES; do
  train=("$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS")
  for r in $(seq "$ROUNDS"); do
    "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.untraced"
    "$EACGM" run --no-gpu --json --config "$TMP/duty.toml" -- "${train[@]}" >"$TMP/$size.duty.$r.json" 2>"$TMP/err"
    step_of <"$TMP/err" >>"$TMP/$size.duty"
    "$EACGM" run --no-gpu --json --config "$TMP/exact.toml" -- "${train[@]}" >"$TMP/$size.exact.$r.json" 2>"$TMP/err"
    step_of <"$TMP/err" >>"$TMP/$size.exact"
  done
  base=$(median <"$TMP/$size.untraced")
  for mode in duty exact; do
    m=$(median <"$TMP/$size.$mode")
    echo "$size $mode: step untraced $base ms ($(spread <"$TMP/$size.untraced")), traced $m ms ($(spread <"$TMP/$size.$mode")), ratio $(awk -v m="$m" -v b="$base" 'BEGIN{printf "%.4f", m/b}')"
  done
  [ -n "${OUT:-}" ] && cp "$TMP"/*.json "$OUT"/ 2>/dev/null
  "$PY" - "$TMP" "$size" "$ROUNDS" <<'PYEOF'
import json, sys
tmp, size, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def kinds(doc):
    out = {"launch": [0, 0.0], "copy": [0, 0.0], "memset": [0, 0.0]}
    for f in doc["functions"]:
        n = f["function"]
        k = "launch" if n.startswith("cuLaunch") else "copy" if n.startswith("cuMemcpy") else "memset" if n.startswith("cuMemset") else None
        if k:
            out[k][0] += f["calls"]
            out[k][1] += (f.get("calls_error") or 0) ** 2
    return out
def load(path):
    text = open(path).read()
    try:
        return json.loads(text)
    except ValueError:
        sys.exit(f"{path}: not JSON: {text[:300]!r}")
for r in range(1, rounds + 1):
    d = load(f"{tmp}/{size}.duty.{r}.json")
    e = load(f"{tmp}/{size}.exact.{r}.json")
    o = d["overhead"]
    kd, ke = kinds(d), kinds(e)
    parts = []
    for k in ("launch", "copy", "memset"):
        exact = ke[k][0]
        est, err = kd[k][0], kd[k][1] ** 0.5
        rel = (est - exact) / exact * 100 if exact else 0.0
        parts.append(f"{k} {est} vs {exact} ({rel:+.2f}%, reported error {err:.0f})")
    main = max(o["processes"], key=lambda p: p["estimated_s"], default={})
    print(f"  round {r}: attached {o.get('attached_share', 1)*100:.1f}% of the time, duty now {o.get('duty_fraction', 1)*100:.1f}%,"
          f" switches {d['accounting'].get('duty_switches', 0)}, failures {d['accounting'].get('duty_failures', 0)},"
          f" estimated probe share {main.get('cpu_share', 0)*100:.2f}%; " + "; ".join(parts))
PYEOF
done
