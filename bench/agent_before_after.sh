#!/usr/bin/env bash
# The cost of one traced call through two builds of eacgm, interleaved in rounds on the
# same machine: `eacgm trace` (JSON Lines to a file) and `eacgm run` (summary) on a tight
# loop of one CUDA runtime call, against the loop without probes. For checking that a
# restructuring of the pipeline changed nothing measurable.
# Usage: bench/agent_before_after.sh BEFORE_DIR AFTER_DIR LOOP [ITERS] [CALL]
#        (each DIR holds an eacgm; LOOP is cuda_loop)   ROUNDS=7 by default
set -euo pipefail
BEFORE=$1 AFTER=$2 LOOP=$3 ITERS=${4:-200000} CALL=${5:-malloc}
ROUNDS=${ROUNDS:-7}
SYM=cudaMalloc
[ "$CALL" = free_null ] && SYM=cudaFree
. "$(dirname "$0")/common.sh"
LOOP_CPU=${LOOP_CPU:-$(( $(nproc) > 4 ? 2 : 0 ))}
AGENT_CPU=${AGENT_CPU:-$(( $(nproc) > 4 ? 4 : 1 ))}
loop=(taskset -c "$LOOP_CPU" "$LOOP" --iters "$ITERS" --call "$CALL")
range() { sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.0f-%.0f", lo, hi}'; }
for _ in $(seq "$ROUNDS"); do
  "${loop[@]}" | ns_of >>"$TMP/base"
  for which in before after; do
    dir=$BEFORE; [ $which = after ] && dir=$AFTER
    taskset -c "$AGENT_CPU" "$dir/eacgm" trace --no-gpu --probes "$SYM" -o "$TMP/ev.jsonl" -- "${loop[@]}" \
      2>"$TMP/err" | ns_of >>"$TMP/trace.$which"
    grep -q "drops=0 lost_exits=0" "$TMP/err" || echo "$which trace: $(grep -o 'done.*' "$TMP/err")" >&2
    taskset -c "$AGENT_CPU" "$dir/eacgm" run --no-gpu --probes "$SYM" -- "${loop[@]}" 2>/dev/null | ns_of \
      >>"$TMP/run.$which"
  done
done
b=$(median <"$TMP/base")
printf "loop: %d x %s, median of %d interleaved rounds (ns per call; added = over no probes %.1f)\n" \
  "$ITERS" "$CALL" "$ROUNDS" "$b"
printf "%-28s %10s %12s %10s %12s %8s\n" "configuration" "before" "(min-max)" "after" "(min-max)" "ratio"
for c in trace run; do
  x=$(median <"$TMP/$c.before") y=$(median <"$TMP/$c.after")
  xr=$(range <"$TMP/$c.before") yr=$(range <"$TMP/$c.after")
  awk -v c="$c" -v x="$x" -v y="$y" -v b="$b" -v xr="$xr" -v yr="$yr" \
    'BEGIN { printf "%-28s %10.1f %12s %10.1f %12s %8.3f\n", "eacgm " c ", one function", x, xr, y, yr, (y - b) / (x - b) }'
done
echo "ratio: after's added cost over before's (1.000: unchanged)"
