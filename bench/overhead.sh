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
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ns_of() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }

loop_ns() { "$LOOP" --iters "$ITERS" --call "$CALL" | ns_of; }

with_bare() {  # $1: entry | entry+exit | record
  local out=()
  for _ in $(seq "$REPS"); do
    "$B/eacgm-bench-bare" "$LIB" "$SYM" "$1" > "$TMP/bare.out" &
    local pid=$!
    for _ in $(seq 500); do grep -q attached "$TMP/bare.out" 2>/dev/null && break; sleep 0.01; done
    out+=("$(loop_ns)")
    kill -INT "$pid"; wait "$pid" || true
  done
  printf '%s\n' "${out[@]}" | median
}

with_eacgm() {  # $1: probes
  local out=()
  for _ in $(seq "$REPS"); do
    "$B/eacgm" trace --probes "$1" -o "$TMP/events.jsonl" -- "$LOOP" --iters "$ITERS" --call "$CALL" \
      > "$TMP/loop.out" 2> "$TMP/eacgm.err"
    out+=("$(ns_of < "$TMP/loop.out")")
    wc -l < "$TMP/events.jsonl" > "$TMP/events.$1"
    sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/loop.out" > "$TMP/calls.$1"
    grep -o 'events=.*' "$TMP/eacgm.err" | tail -1 > "$TMP/account.$1"
  done
  printf '%s\n' "${out[@]}" | median
}

with_eacgm_run() {  # $1: probes; the summary sink instead of JSON Lines
  for _ in $(seq "$REPS"); do
    "$B/eacgm" run --probes "$1" -- "$LOOP" --iters "$ITERS" --call "$CALL" 2> /dev/null | ns_of
  done | median
}

base=$(for _ in $(seq "$REPS"); do loop_ns; done | median)
entry=$(with_bare entry)
entry_exit=$(with_bare entry+exit)
minimal=$(with_bare record)
eacgm_one=$(with_eacgm "$SYM")
eacgm_all=$(with_eacgm cuda)
eacgm_run=$(with_eacgm_run "$SYM")

awk -v b="$base" -v e="$entry" -v ee="$entry_exit" -v m="$minimal" -v g1="$eacgm_one" -v ga="$eacgm_all" -v gr="$eacgm_run" \
    -v it="$ITERS" -v call="$CALL" 'BEGIN {
  printf "loop: %d x %s, median of runs (ns per call)\n", it, call
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
