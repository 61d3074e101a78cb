#!/usr/bin/env bash
# The duty cycle on a node of several ranks: N copies of train_step.py (one GPU shared,
# each its own process and address space) under one `eacgm run`, once with the budget
# off (every call counted, exact) and once with `duty_cycle = true` and the default 1%
# budget. The copies are deterministic and alike, so both runs make the same calls.
# Prints the duty run's launches, copies and memsets against the exact run's (all ranks
# together, and per rank from the GPU-work table), the share of the time the cycled
# probes were attached, the switches and what they took (the kernel registers or
# removes each probe in every address space that maps the library), the median step of
# each run, and, for rank 1, its steps inside the windows and inside the detaches against
# those between (bench/gpu/window_cost.py). Logs are copied to $OUT/ranksN when OUT is set.
# Usage: bench/gpu/duty_ranks.sh EACGM [N] [SIZE] [STEPS]   (PY: the torch interpreter)
set -uo pipefail
EACGM=$1 N=${2:-8} SIZE=${3:-cpu} STEPS=${4:-1500}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
printf '[trace]\nbudget = 0\n' >"$TMP/exact.toml"
printf '[trace]\nduty_cycle = true\n' >"$TMP/duty.toml"
ranks() {  # NAME
  local cmd="" i
  for i in $(seq "$N"); do
    cmd+="'$PY' '$HERE/train_step.py' --size $SIZE --steps $STEPS --step-log '$TMP/$1.$i.steps' >'$TMP/$1.$i.train' 2>&1 & "
  done
  echo "${cmd}wait"
}
"$EACGM" run --json --no-gpu --config "$TMP/exact.toml" -- bash -c "$(ranks exact)" \
  >"$TMP/exact.json" 2>"$TMP/exact.err" || { echo "exact run failed:"; tail -5 "$TMP/exact.err"; }
EACGM_DUTY_LOG="$TMP/duty.log" EACGM_DUTY_SWITCHES="$TMP/duty.switches" \
  "$EACGM" run --json --no-gpu --config "$TMP/duty.toml" -- bash -c "$(ranks duty)" \
  >"$TMP/duty.json" 2>"$TMP/duty.err" || { echo "duty run failed:"; tail -5 "$TMP/duty.err"; }
[ -n "${OUT:-}" ] && mkdir -p "$OUT/ranks$N" &&
  cp "$TMP"/*.json "$TMP"/*.err "$TMP"/duty.log "$TMP"/duty.switches "$TMP"/duty.1.steps "$OUT/ranks$N"/ 2>/dev/null
for run in exact duty; do
  echo "$run: median step $(grep -ho 'step_ms=[0-9.]*' "$TMP"/$run.*.train | cut -d= -f2 | median) ms over $N ranks"
done
python3 "$HERE/duty_compare.py" "$TMP" "$N ranks" --ranks
echo "rank 1, steps inside windows and detaches against steps between:"
python3 "$HERE/window_cost.py" "$TMP/duty.switches" "$TMP/duty.1.steps"
