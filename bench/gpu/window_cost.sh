#!/usr/bin/env bash
# What always-on counting costs a training step, in one process (bench/gpu/window_cost.py):
# `eacgm run` with the duty cycle held at FRACTION (EACGM_DUTY_FRACTION) attaches the
# counted probes for a window of each second; train_step.py logs its steps, the agent
# its switches (EACGM_DUTY_SWITCHES), and steps inside windows are compared with steps
# between them, pair by pair. Both logs are copied to $OUT when it is set.
# Usage: bench/gpu/window_cost.sh EACGM [SIZES] [STEPS] [FRACTION]
#   (SIZES: "gpu cpu" by default; PY: the torch interpreter; CONFIG: the agent's
#   configuration, bench/gpu/duty.toml by default)
set -uo pipefail
EACGM=$1 SIZES=${2:-"gpu cpu"} STEPS=${3:-2000} FRACTION=${4:-0.4}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
CONFIG=${CONFIG:-$HERE/duty.toml}
. "$HERE/rounds_common.sh"
for size in $SIZES; do
  EACGM_DUTY_FRACTION=$FRACTION EACGM_DUTY_SWITCHES="$TMP/$size.switches" \
    "$EACGM" run --no-gpu --json --config "$CONFIG" -- \
    "$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS" --step-log "$TMP/$size.steps" \
    >"$TMP/$size.json" 2>"$TMP/$size.err" || { echo "$size: eacgm run failed:"; tail -5 "$TMP/$size.err"; continue; }
  echo "== $size: $(step_of <"$TMP/$size.err") ms per step overall, duty cycle held at $FRACTION"
  "$PY" "$HERE/window_cost.py" "$TMP/$size.switches" "$TMP/$size.steps"
  grep -o 'counted_calls=[0-9]*\|duty_switches=[0-9]*' "$TMP/$size.err" | tr '\n' ' '
  echo
  [ -n "${OUT:-}" ] && cp "$TMP/$size.switches" "$TMP/$size.steps" "$TMP/$size.err" "$OUT"/ 2>/dev/null
done
