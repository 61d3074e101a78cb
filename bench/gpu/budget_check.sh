#!/usr/bin/env bash
# The budget controller's estimate against the measured slowdown on the GPU machine:
# `eacgm probes --calibrate` three times, then the CPU-bound and GPU-bound GPT-style loops
# of train_step.py untraced and under always-on `eacgm run` in interleaved rounds; for
# each, the median step-time ratio beside the controller's own estimate of the traced
# process's probe cost (run --json "overhead") and what it changed.
# Usage: bench/gpu/budget_check.sh EACGM [ROUNDS] [STEPS] [SIZES]   (PY: the torch interpreter)
set -uo pipefail
EACGM=$1 ROUNDS=${2:-3} STEPS=${3:-300} SIZES=${4:-"cpu gpu"}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
for i in 1 2 3; do "$EACGM" probes --calibrate | tail -4; done
for size in $SIZES; do
  train=("$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS")
  for r in $(seq "$ROUNDS"); do
    "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.untraced"
    "$EACGM" run --no-gpu --json --mode always-on -- "${train[@]}" >"$TMP/$size.$r.json" 2>"$TMP/$size.err"
    step_of <"$TMP/$size.err" >>"$TMP/$size.traced"
  done
  base=$(median <"$TMP/$size.untraced") traced=$(median <"$TMP/$size.traced")
  echo "$size: step untraced $base ms, always-on $traced ms, ratio $(awk -v m="$traced" -v b="$base" 'BEGIN{printf "%.4f", m/b}')"
  for r in $(seq "$ROUNDS"); do
    "$PY" - "$TMP/$size.$r.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
o = d["overhead"]
main = max(o["processes"], key=lambda p: p["estimated_s"], default=None)
acc = d["accounting"]
if main is None:
    print("  no estimate", o.get("calibrated"))
else:
    own = main["cpu_s"] - main["estimated_s"]
    print(f"  pid {main['pid']}: estimated {main['estimated_s']*1e3:.1f} ms of probes in {main['cpu_s']*1e3:.0f} ms CPU"
          f" (slowdown estimate {main['estimated_s']/own*100 if own > 0 else float('nan'):.2f}%),"
          f" counted {acc.get('counted_calls', 0)}, timed {acc.get('sampled_calls', 0)},"
          f" raises {acc.get('budget_shift_raises', 0)}, lowers {acc.get('budget_shift_lowers', 0)},"
          f" reduced probes {o['reduced_probes']}, max shift {o['max_sample_shift']}")
PYEOF
  done
done
