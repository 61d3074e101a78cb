#!/usr/bin/env bash
# What a link limited to one process (uprobe_multi's pid) costs the traced process when
# another link on the same functions is limited to another process (root). A tight
# driver-API loop (tests/programs/driver_loop --burst: cuLaunchKernel and
# cuMemsetD32Async on the stub libcuda), pinned to CPU 0, under empty uprobe session
# programs that decline the return (eacgm-bench-bare ... session):
# - none: untraced;
# - one_pid: one link limited to the loop's process (BARE_PID);
# - two_pid: the same and a second link limited to another process (a `sleep`);
# - one_global, two_global: one and two links for every process.
# The kernel runs every link's entry at each trap; an entry limited to another process
# returns early and asks for the return, so two_pid costs the loop a return trap per call.
# Prints each configuration's ns per call, sorted, over ROUNDS interleaved rounds.
# Usage: bench/pid_links.sh BUILD [ROUNDS] [ITERS]
set -uo pipefail
B=$1 ROUNDS=${2:-5} ITERS=${3:-2000}
LOOP=$B/driver_loop
LIB=$(readlink -f "$(ldd "$LOOP" | awk '/libcuda/ {print $3}')")
SYMS=cuLaunchKernel,cuMemsetD32Async
AGENT_CPU=${AGENT_CPU:-$(($(nproc) > 1 ? 1 : 0))}
. "$(dirname "$0")/common.sh"
CONFIGS="none one_pid two_pid one_global two_global"
# Attaches one empty session link per argument (a pid, or - for every process), then
# lets the stopped loop run and detaches them when it ends.
with_links() {
  local holders=() i=0
  for p in "$@"; do
    if [ "$p" = - ]; then
      taskset -c "$AGENT_CPU" "$B/eacgm-bench-bare" "$LIB" "$SYMS" session >"$TMP/bare.$i" 2>&1 &
    else
      BARE_PID=$p taskset -c "$AGENT_CPU" "$B/eacgm-bench-bare" "$LIB" "$SYMS" session >"$TMP/bare.$i" 2>&1 &
    fi
    holders+=($!)
    for _ in $(seq 500); do grep -q attached "$TMP/bare.$i" 2>/dev/null && break; sleep 0.01; done
    i=$((i + 1))
  done
  kill -CONT "$LOOP_PID"
  wait "$LOOP_PID"
  if [ ${#holders[@]} -gt 0 ]; then
    kill -INT "${holders[@]}"
    wait "${holders[@]}" 2>/dev/null
  fi
}
for _ in $(seq "$ROUNDS"); do
  for cfg in $CONFIGS; do
    sleep 600 &
    OTHER=$!
    # The loop stops itself before exec, so that its pid is known before the links exist.
    bash -c 'kill -STOP $$; exec taskset -c 0 "$@"' loop "$LOOP" --threads 1 --iters "$ITERS" --burst 100 >"$TMP/out" &
    LOOP_PID=$!
    sleep 0.1
    case $cfg in
      none) with_links ;;
      one_pid) with_links "$LOOP_PID" ;;
      two_pid) with_links "$LOOP_PID" "$OTHER" ;;
      one_global) with_links - ;;
      two_global) with_links - - ;;
    esac
    echo "$cfg $(ns_of <"$TMP/out")" >>"$TMP/results"
    kill "$OTHER" 2>/dev/null
    wait "$OTHER" 2>/dev/null
  done
done
echo "ns per call over $ROUNDS interleaved rounds, sorted"
for cfg in $CONFIGS; do
  printf '%-11s %s\n' "$cfg" "$(awk -v c="$cfg" '$1 == c {print $2}' "$TMP/results" | sort -n | tr '\n' ' ')"
done
