#!/usr/bin/env bash
# The BPF programs' own run time per invocation (kernel.bpf_stats_enabled), read from
# the agent's program fds (/proc/PID/fdinfo: run_time_ns, run_cnt) while it traces a
# tight loop of cudaMalloc (or cudaFree(NULL) with CALL=free_null), per call. With
# CALL=cuStreamSynchronize or cuLaunchKernel (any probe of the cuda_driver catalog): the
# driver loop (launch, memset, synchronize on the stub libcuda) under `eacgm run --mode
# MODE` (default always-on) with that probe alone, the duty cycle off (every call counted).
# No bpftool needed.
# Usage: [MODE=per-call|always-on] bench/prog_cost.sh [BUILD_DIR] [ITERS] [CALL]
set -euo pipefail
B=${1:-build}
ITERS=${2:-2000000}
CALL=${3:-malloc}
SYM=cudaMalloc
[ "$CALL" = free_null ] && SYM=cudaFree
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
cfg=$(mktemp)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -f "$cfg"' EXIT
printf '[trace]\nduty_cycle = false\n' >"$cfg"

if [ "$CALL" = malloc ] || [ "$CALL" = free_null ]; then
  "$B/eacgm" trace --probes "$SYM" -o /dev/null -- "$B/cuda_loop" --iters "$ITERS" --call "$CALL" \
    > /dev/null 2>&1 &
else
  "$B/eacgm" run --no-gpu --config "$cfg" --mode "${MODE:-always-on}" --probes "$CALL" -- "$B/driver_loop" --iters "$ITERS" \
    > /dev/null 2>&1 &
fi
agent=$!  # the agent itself (its launched command is a child named eacgm until it execs)
snapshot() {  # prog name is not in fdinfo: tell entry from exit by the program's id order
  for f in /proc/"$agent"/fdinfo/*; do
    awk '/^prog_id:/ {id=$2} /^run_time_ns:/ {t=$2} /^run_cnt:/ {c=$2} END {if (id && c > 0) print id, t, c}' "$f"
  done 2>/dev/null | sort -n
}
# From the traced loop's start on (start-up, and the calibration, take seconds on a loaded
# machine; the launched command is released, and execs, once the probes are attached).
loop=$(basename "$([ "$CALL" = malloc ] || [ "$CALL" = free_null ] && echo cuda_loop || echo driver_loop)")
for _ in $(seq 300); do pgrep -P "$agent" -x "$loop" >/dev/null && break; sleep 0.2; done
sleep 1
a=$(snapshot); sleep 2; b=$(snapshot)
wait || true
awk 'NR == FNR {t[$1] = $2; c[$1] = $3; next}
     ($1 in c) && $3 - c[$1] > 1000 {printf "prog %s: %.0f ns per run over %d runs\n", $1, ($2 - t[$1]) / ($3 - c[$1]), $3 - c[$1]}' \
  <(echo "$a") <(echo "$b")
echo "(per call: the entry and the exit program, in that order; always-on: the session program, entry"
echo " and return runs together; the host-wait tracer's sys_enter and sys_exit programs follow)"
