#!/usr/bin/env bash
# Count accuracy of the always-on duty cycle: train_step.py runs its warm-up, then an
# eacgm agent attaches to it (`run --pid`) and it runs its measured steps; once with the
# budget off (every call counted, exact), once with the default 1% budget and
# `duty_cycle = true` (the counted probes cycled, counts scaled). The loop is deterministic, so both processes make the
# same calls. (Two agents on one process would not do: a second agent's probes on the
# same functions change what the first one's cost.) Prints, per kind of operation, the
# estimate against the exact count with the error the estimate reports, and the share
# of the time the cycled probes were attached. The duty run's intervals are logged
# (EACGM_DUTY_LOG) and copied to $OUT with the reports.
# Usage: bench/gpu/duty_accuracy.sh EACGM [SIZE] [STEPS]   (PY: the torch interpreter)
set -uo pipefail
EACGM=$1 SIZE=${2:-cpu} STEPS=${3:-2000}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
wait_for() { for _ in $(seq 6000); do [ -e "$1" ] && return 0; sleep 0.01; done; echo "timeout: $1"; return 1; }
printf '[trace]\nbudget = 0\n' >"$TMP/exact.toml"
printf '[trace]\nduty_cycle = true\n' >"$TMP/duty.toml"
trace_steps() {  # NAME [eacgm options]
  local name=$1
  shift
  rm -f "$TMP"/ready.* "$TMP"/go.*
  "$PY" "$HERE/train_step.py" --size "$SIZE" --steps "$STEPS" --phases 1 --phase-dir "$TMP" >"$TMP/$name.train" 2>&1 &
  local train=$!
  wait_for "$TMP/ready.0" || exit 1
  "$EACGM" run --json --no-gpu --pid "$train" "$@" >"$TMP/$name.json" 2>"$TMP/$name.err" &
  for _ in $(seq 3000); do grep -q "tracing" "$TMP/$name.err" 2>/dev/null && break; sleep 0.01; done
  touch "$TMP/go.0"
  wait
  grep -h "phase=" "$TMP/$name.train"
}
trace_steps exact --config "$TMP/exact.toml"
EACGM_DUTY_LOG="$TMP/duty.log" trace_steps duty --config "$TMP/duty.toml"
[ -n "${OUT:-}" ] && cp "$TMP"/*.json "$TMP"/*.err "$TMP"/duty.log "$OUT"/ 2>/dev/null
python3 "$HERE/duty_compare.py" "$TMP" "$SIZE"
