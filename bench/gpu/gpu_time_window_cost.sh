#!/usr/bin/env bash
# What GPU time sampling costs a training step, inside one process: the loop
# (train_step.py) carries the hook with GPU time on (EACGM_GPU_TIME=1, no agent), and
# bench/gpu/pause_windows.py holds its timing on for FRACTION of every second and paused
# for the rest (the ring's `paused` word; launches are counted either way);
# bench/gpu/window_cost.py compares the steps inside the windows with those between them
# (pairs of adjacent windows, 95% bootstrap), as for the probes' cost.
# The rate starts at 1 in 16 and is planned per kernel after 100 ms of timing and every
# 250 ms after (docs/gpu-time.md): SKIP_S (default 0) leaves out the first seconds, for the
# steady state alone.
# Usage: bench/gpu/gpu_time_window_cost.sh BIN_DIR [SIZE] [STEPS] [FRACTION]
#   (BIN_DIR holds libeacgm_hook.so; SIZE: cpu or gpu; PY: the torch interpreter)
set -uo pipefail
BIN=$(cd "$1" && pwd) SIZE=${2:-cpu} STEPS=${3:-3000} FRACTION=${4:-0.4}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/eacgm-gpu-time-window.XXXXXX)
env LD_PRELOAD="$BIN/libeacgm_hook.so" EACGM_GPU_TIME=1 \
  "$PY" "$HERE/train_step.py" --size "$SIZE" --steps "$STEPS" --step-log "$TMP/steps" >"$TMP/step" 2>/dev/null &
loop=$!
"$PY" "$HERE/pause_windows.py" "$loop" "$FRACTION" "$TMP/switches" &
toggler=$!
wait "$loop"
kill -INT "$toggler" 2>/dev/null
wait "$toggler" 2>/dev/null
echo "== $SIZE: $(cat "$TMP/step"); GPU timing on for $FRACTION of every second, paused between"
"$PY" "$HERE/window_cost.py" "$TMP/switches" "$TMP/steps" 3 "${SKIP_S:-0}"
if [ "${SKIP_S:-0}" != 0 ]; then
  echo "-- the first $SKIP_S s included:"
  "$PY" "$HERE/window_cost.py" "$TMP/switches" "$TMP/steps" 3 0 | grep -E "pairs"
fi
[ -n "${OUT:-}" ] && cp "$TMP/switches" "$TMP/steps" "$OUT"/ 2>/dev/null
rm -rf "$TMP"
true
