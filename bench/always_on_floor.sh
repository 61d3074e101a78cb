#!/usr/bin/env bash
# The always-on mode's cost per call against the kernel's floor, on a tight driver-API
# loop (tests/programs/driver_loop with --burst: cuLaunchKernel and cuMemsetD32Async in a
# row, one cuStreamSynchronize per burst), interleaved in rounds (root):
# - untraced;
# - EMPTY entry programs on the two functions (eacgm-bench-bare ... entry), empty entry
#   and return programs (... entry+exit), and an empty session program that declines
#   the return (... session): the uprobe floors; and a session program that only counts
#   the call per process in a per-CPU hash map (... count): the least a count costs;
# - `eacgm run --mode always-on` (the budget off: every call counted, 1 in 16 timed) and
#   `--mode per-call`, both with the driver catalog only.
# Prints medians of ns per call and the ratios the always-on mode is held to: its added
# cost over an empty entry's (target <= 1.05) and over an empty pair's (below 1), and
# per call's over the pair's (target <= 1.15).
# TOUCH_KIB=K: the loop reads 64 random lines of a K KiB buffer before each call
# (driver_loop --touch-kib), as code between two CUDA calls would, so that what the
# programs and the kernel's path touch is no longer in the caches.
# Usage: bench/always_on_floor.sh BUILD [ROUNDS] [ITERS] [BURST]
set -uo pipefail
B=$1 ROUNDS=${2:-5} ITERS=${3:-2000} BURST=${4:-100}
LOOP=$B/driver_loop
LIB=$(readlink -f "$(ldd "$LOOP" | awk '/libcuda/ {print $3}')")
. "$(dirname "$0")/common.sh"
printf '[trace]\nbudget = 0\n' >"$TMP/exact.toml"
LOOP_CPU=${LOOP_CPU:-0}
AGENT_CPU=${AGENT_CPU:-$(( $(nproc) > 1 ? 1 : 0 ))}
loop=(taskset -c "$LOOP_CPU" "$LOOP" --threads 1 --iters "$ITERS" --burst "$BURST" --touch-kib "${TOUCH_KIB:-0}")
bare() {  # entry | entry+exit | session | count
  local pids=()
  for sym in cuLaunchKernel cuMemsetD32Async; do
    taskset -c "$AGENT_CPU" "$B/eacgm-bench-bare" "$LIB" "$sym" "$1" >"$TMP/bare.$sym" 2>&1 &
    pids+=($!)
    for _ in $(seq 500); do grep -q attached "$TMP/bare.$sym" 2>/dev/null && break; sleep 0.01; done
  done
  "${loop[@]}" | ns_of
  kill -INT "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null
}
eacgm() {  # mode
  taskset -c "$AGENT_CPU" "$B/eacgm" run --no-gpu --probes cuda_driver --config "$TMP/exact.toml" --mode "$1" \
    -- "${loop[@]}" 2>/dev/null | ns_of
}
for _ in $(seq "$ROUNDS"); do
  "${loop[@]}" | ns_of >>"$TMP/untraced"
  bare entry >>"$TMP/entry"
  bare entry+exit >>"$TMP/pair"
  bare session >>"$TMP/session"
  bare count >>"$TMP/count"
  eacgm always-on >>"$TMP/always-on"
  eacgm per-call >>"$TMP/per-call"
done
for c in untraced entry pair session count always-on per-call; do declare "m_${c//-/_}=$(median <"$TMP/$c")"; done
awk -v b="$m_untraced" -v e="$m_entry" -v p="$m_pair" -v s="$m_session" -v k="$m_count" -v a="$m_always_on" -v c="$m_per_call" -v r="$ROUNDS" 'BEGIN {
  printf "median of %d interleaved rounds, ns per call\n", r
  printf "%-34s %9.1f\n", "untraced", b
  printf "%-34s %9.1f %9.1f\n", "empty entry", e, e - b
  printf "%-34s %9.1f %9.1f\n", "empty entry + return", p, p - b
  printf "%-34s %9.1f %9.1f\n", "empty session, return declined", s, s - b
  printf "%-34s %9.1f %9.1f\n", "count per process, return declined", k, k - b
  printf "%-34s %9.1f %9.1f\n", "eacgm always-on (1 in 16 timed)", a, a - b
  printf "%-34s %9.1f %9.1f\n", "eacgm per call", c, c - b
  printf "always-on / empty entry: %.3f (target <= 1.05); / empty session: %.3f; / empty pair: %.3f (below 1); per call / empty pair: %.3f (target <= 1.15)\n", (a - b) / (e - b), (a - b) / (s - b), (a - b) / (p - b), (c - b) / (p - b)
  printf "count per process / empty entry: %.3f; always-on / count per process: %.3f\n", (k - b) / (e - b), (a - b) / (k - b)
}'
