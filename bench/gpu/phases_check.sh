#!/usr/bin/env bash
# Same-process phases: one train_step.py process runs PHASES phases of STEPS steps;
# eacgm (`trace --pid`, MODE) is attached for the odd phases and detached for the even
# ones, so traced and untraced steps come from the same process, allocator state and GPU
# clocks. Prints each phase's median step time and the ratio of the traced phases'
# median to the untraced ones'.
# Usage: bench/gpu/phases_check.sh EACGM [SIZE] [PHASES] [STEPS] [MODE]
#   (PY: the torch interpreter; CONFIG: an eacgm configuration file for the traced phases)
set -uo pipefail
EACGM=$1 SIZE=${2:-cpu} PHASES=${3:-6} STEPS=${4:-300} MODE=${5:-always-on}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
wait_for() { for _ in $(seq 6000); do [ -e "$1" ] && return 0; sleep 0.01; done; echo "timeout: $1"; return 1; }
"$PY" "$HERE/train_step.py" --size "$SIZE" --steps "$STEPS" --phases "$PHASES" --phase-dir "$TMP" >"$TMP/train.out" 2>&1 &
train=$!
tracer=
for i in $(seq 0 $((PHASES - 1))); do
  wait_for "$TMP/ready.$i" || break
  if [ -n "$tracer" ]; then kill -INT "$tracer"; wait "$tracer"; tracer=; fi
  if [ $((i % 2)) -eq 1 ]; then
    "$EACGM" trace --pid "$train" --mode "$MODE" --no-gpu ${CONFIG:+--config "$CONFIG"} -o /dev/null 2>"$TMP/eacgm.$i.err" &
    tracer=$!
    for _ in $(seq 3000); do grep -q "tracing" "$TMP/eacgm.$i.err" 2>/dev/null && break; sleep 0.01; done
    kill -0 "$tracer" 2>/dev/null || { echo "eacgm did not start:"; cat "$TMP/eacgm.$i.err"; exit 1; }
  fi
  touch "$TMP/go.$i"
done
wait_for "$TMP/ready.$PHASES"
if [ -n "$tracer" ]; then kill -INT "$tracer"; wait "$tracer"; fi
wait "$train"
sed -n 's/^phase=\([0-9]*\) step_ms=\([0-9.]*\)/\1 \2/p' "$TMP/train.out" >"$TMP/phases"
awk '{print "phase " $1 ($1 % 2 ? " traced  " : " untraced") " step " $2 " ms"}' "$TMP/phases"
untraced=$(awk '$1 % 2 == 0 {print $2}' "$TMP/phases" | median)
traced=$(awk '$1 % 2 == 1 {print $2}' "$TMP/phases" | median)
echo "$SIZE $MODE same process: untraced $untraced ms, traced $traced ms, ratio $(awk -v t="$traced" -v u="$untraced" 'BEGIN{printf "%.4f", t/u}')"
grep -h "^eacgm: tracing\|^eacgm: done" "$TMP"/eacgm.*.err | tail -2
