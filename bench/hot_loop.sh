#!/usr/bin/env bash
# Per-call cost of the two modes on a tight driver-API loop (tests/programs/driver_loop:
# cuLaunchKernel, cuMemsetD32Async, cuStreamSynchronize), interleaved in rounds: the loop
# untraced, under `eacgm run --mode always-on` and `--mode per-call`. Prints medians of
# ns per call and what each mode adds. The duty cycle is off (`duty_cycle = false`): the
# always-on figure is that of counting every call.
# Usage: bench/hot_loop.sh EACGM DRIVER_LOOP [ROUNDS] [ITERS] [THREADS]
set -uo pipefail
EACGM=$1 LOOP=$2 ROUNDS=${3:-5} ITERS=${4:-200000} THREADS=${5:-1}
. "$(dirname "$0")/common.sh"
printf '[trace]\nduty_cycle = false\n' >"$TMP/exact.toml"
loop=("$LOOP" --threads "$THREADS" --iters "$ITERS")
for _ in $(seq "$ROUNDS"); do
  "${loop[@]}" | ns_of >>"$TMP/untraced"
  "$EACGM" run --no-gpu --probes cuda_driver --config "$TMP/exact.toml" --mode always-on -- "${loop[@]}" 2>/dev/null | ns_of >>"$TMP/always-on"
  "$EACGM" run --no-gpu --probes cuda_driver --mode per-call -- "${loop[@]}" 2>/dev/null | ns_of >>"$TMP/per-call"
done
base=$(median <"$TMP/untraced")
printf '%-10s %12s %12s\n' mode ns_per_call added_ns
for m in untraced always-on per-call; do
  v=$(median <"$TMP/$m")
  printf '%-10s %12s %12s\n' "$m" "$v" "$(awk -v v="$v" -v b="$base" 'BEGIN{printf "%.1f", v-b}')"
done
