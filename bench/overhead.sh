#!/usr/bin/env bash
# Overhead and capture benchmark (root): the cost of one traced call, measured in one
# run as a tight loop of cudaMalloc calls (or cudaFree(NULL) with --call free_null on
# a GPU machine) with no probes, with EMPTY BPF programs (the kernel's own uprobe
# cost), and through the full eacgm pipeline (JSON Lines to a file).
# Usage: bench/overhead.sh [BUILD_DIR] [ITERS] [CALL]
set -euo pipefail
B=${1:-build}
ITERS=${2:-200000}
CALL=${3:-malloc}
REPS=${REPS:-5}
SYM=cudaMalloc
[ "$CALL" = free_null ] && SYM=cudaFree
LOOP="$B/cuda_loop"
LIB=$(ldd "$LOOP" | awk '/libcudart/ {print $3}')
LIB=$(readlink -f "$LIB")
. "$(dirname "$0")/common.sh"

# The loop runs on one CPU and the agent (or the floor program) on another, so that the
# scheduler's placement does not move the figures between configurations; each round
# measures every configuration once, and the table shows each one's median over rounds.
LOOP_CPU=${LOOP_CPU:-$(( $(nproc) > 4 ? 2 : 0 ))}
AGENT_CPU=${AGENT_CPU:-$(( $(nproc) > 4 ? 4 : 1 ))}
loop_cmd=(taskset -c "$LOOP_CPU" "$LOOP" --iters "$ITERS" --call "$CALL")

run_base() { "${loop_cmd[@]}" | ns_of; }

run_bare() {  # $1: entry | entry+exit | record
  taskset -c "$AGENT_CPU" "$B/eacgm-bench-bare" "$LIB" "$SYM" "$1" > "$TMP/bare.out" &
  local pid=$!
  for _ in $(seq 500); do grep -q attached "$TMP/bare.out" 2>/dev/null && break; sleep 0.01; done
  "${loop_cmd[@]}" | ns_of
  kill -INT "$pid"; wait "$pid" || true
}

run_eacgm() {  # $1: probes
  taskset -c "$AGENT_CPU" "$B/eacgm" trace --probes "$1" -o "$TMP/events.jsonl" -- "${loop_cmd[@]}" \
    > "$TMP/loop.out" 2> "$TMP/eacgm.err"
  ns_of < "$TMP/loop.out"
  wc -l < "$TMP/events.jsonl" > "$TMP/events.$1"
  sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/loop.out" > "$TMP/calls.$1"
  grep -o 'events=.*' "$TMP/eacgm.err" | tail -1 > "$TMP/account.$1"
}

run_eacgm_summary() {  # $1: probes; the summary sink (eacgm run) instead of JSON Lines
  taskset -c "$AGENT_CPU" "$B/eacgm" run --probes "$1" -- "${loop_cmd[@]}" 2> /dev/null | ns_of
}

for _ in $(seq "$REPS"); do
  run_base >> "$TMP/r.base"
  run_bare entry >> "$TMP/r.entry"
  run_bare entry+exit >> "$TMP/r.entry_exit"
  run_bare record >> "$TMP/r.minimal"
  run_eacgm "$SYM" >> "$TMP/r.eacgm_one"
  run_eacgm cuda >> "$TMP/r.eacgm_all"
  run_eacgm_summary "$SYM" >> "$TMP/r.eacgm_run"
done
for c in base entry entry_exit minimal eacgm_one eacgm_all eacgm_run; do
  declare "$c=$(median < "$TMP/r.$c")"
done

awk -v b="$base" -v e="$entry" -v ee="$entry_exit" -v m="$minimal" -v g1="$eacgm_one" -v ga="$eacgm_all" -v gr="$eacgm_run" \
    -v it="$ITERS" -v call="$CALL" -v reps="$REPS" 'BEGIN {
  printf "loop: %d x %s, median of %d interleaved rounds (ns per call)\n", it, call, reps
  printf "%-44s %10s %12s\n", "configuration", "ns/call", "added ns"
  printf "%-44s %10.1f %12s\n", "no probes", b, "-"
  printf "%-44s %10.1f %12.1f\n", "empty uprobe (entry)", e, e - b
  printf "%-44s %10.1f %12.1f\n", "empty uprobe + uretprobe", ee, ee - b
  printf "%-44s %10.1f %12.1f\n", "minimal record per call (timestamps, 32 B)", m, m - b
  printf "%-44s %10.1f %12.1f\n", "eacgm, this function only, JSONL to file", g1, g1 - b
  printf "%-44s %10.1f %12.1f\n", "eacgm, whole cuda catalog, JSONL to file", ga, ga - b
  printf "%-44s %10.1f %12.1f\n", "eacgm run, this function only, summary", gr, gr - b
  printf "eacgm / bare uprobe+uretprobe added cost: %.3f with JSONL, %.3f with the summary (target <= 1.10)\n", (g1 - b) / (ee - b), (gr - b) / (ee - b)
  printf "minimal one-record-per-call floor / bare: %.3f; eacgm / that floor: %.3f (JSONL), %.3f (summary)\n", (m - b) / (ee - b), (g1 - b) / (m - b), (gr - b) / (m - b)
}'
echo "capture: $(cat "$TMP/events.$SYM") events written for $(cat "$TMP/calls.$SYM") calls; eacgm: $(cat "$TMP/account.$SYM")"

# Capture: tight loops on every core at once, through the full pipeline.
T=$(nproc)
"$B/eacgm" trace --probes "$SYM" -o "$TMP/all.jsonl" -- "$LOOP" --threads "$T" --iters "$ITERS" --call "$CALL" \
  > "$TMP/loop.out" 2> "$TMP/eacgm.err"
echo "capture on $T cores: $(wc -l < "$TMP/all.jsonl") events written for $(sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/loop.out") calls ($(sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p' "$TMP/loop.out") ns per call per thread); eacgm: $(grep -o 'events=.*' "$TMP/eacgm.err" | tail -1)"
