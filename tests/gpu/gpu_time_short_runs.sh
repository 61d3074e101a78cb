#!/usr/bin/env bash
# GPU time's short-run acceptance in one call (GPU machine, root): RUNS GPT short runs of
# tests/gpu/gpu_time_check.sh (5 s of steps at the default budget, the profiler over the
# same steps), one table over them (gpu_time_short_summary.py: launches timed, idle starts,
# samples, cost per timed launch, and how many kernels launched 100 times or more have 10
# samples and 10 timed launches), then, unless WINDOW=0, one run of
# bench/gpu/gpu_time_window_cost.sh (the step timed against paused, the steady state).
# The runs' work stays in a scratch folder; OUT_DIR gets eacgm's JSON and the logs only
# (the profiler's traces are tens of megabytes).
# Usage: tests/gpu/gpu_time_short_runs.sh BIN_DIR OUT_DIR [RUNS]   (RUNS default 5)
# Exit status: 0 every run gave each such kernel its 10 samples, 1 not, 77 no GPU/PyTorch.
set -uo pipefail
BIN=$(readlink -f "${1:?usage: gpu_time_short_runs.sh BIN_DIR OUT_DIR [RUNS]}")
OUT=${2:?usage: gpu_time_short_runs.sh BIN_DIR OUT_DIR [RUNS]}
RUNS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/eacgm-gpu-time-short.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
jsons=()
for i in $(seq "$RUNS"); do
  start=$(date +%s)
  GPU_TIME_WORKLOADS="" GPU_TIME_SHORT_WORKLOADS=gpt "$HERE/gpu_time_check.sh" "$BIN" "$WORK/r$i" >"$OUT/run$i.log" 2>&1
  rc=$?
  [ "$rc" = 77 ] && { tail -3 "$OUT/run$i.log"; exit 77; }
  echo "run $i: gpu_time_check.sh exit $rc in $(( $(date +%s) - start )) s"
  if [ -f "$WORK/r$i/gpt.short.eacgm.json" ]; then
    cp "$WORK/r$i/gpt.short.eacgm.json" "$OUT/run$i.eacgm.json"
    jsons+=("$OUT/run$i.eacgm.json")
  fi
done
[ "${#jsons[@]}" -gt 0 ] || { echo "FAIL: no run left eacgm's JSON (logs in $OUT)"; exit 1; }
python3 "$HERE/gpu_time_short_summary.py" "${jsons[@]}"
status=$?
if [ "${WINDOW:-1}" != 0 ]; then
  SKIP_S=10 "$HERE/../../bench/gpu/gpu_time_window_cost.sh" "$BIN" cpu 11000 0.4 >"$OUT/window.log" 2>&1
  echo "window cost (exit $?):"
  tail -8 "$OUT/window.log"
fi
exit "$status"
