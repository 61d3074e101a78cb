#!/usr/bin/env bash
# What the host-wait tracer costs system calls (root, real eBPF): build/bench/syscall_loop
# (getppid and zero-timeout poll, best of 5 rounds of 1M) alone, then while `eacgm run`
# traces another process with `[trace] host_waits` on and off. The loop itself is not
# traced: the cost is the one every process of the machine pays while the tracepoints
# are enabled. Three interleaved rounds.
# Usage: bench/host_wait_cost.sh [BUILD_DIR]
set -euo pipefail
BUILD=$(readlink -f "${1:-build}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
printf '[trace]\nhost_waits = true\n' >"$WORK/on.toml"
printf '[trace]\nhost_waits = false\n' >"$WORK/off.toml"
under() {  # CONFIG: the loop while eacgm run traces a sleeping process
  "$BUILD/eacgm" run --no-gpu --config "$1" -- sleep 30 >/dev/null 2>"$WORK/eacgm.err" &
  local e=$!
  for _ in $(seq 500); do grep -q "tracing" "$WORK/eacgm.err" && break; sleep 0.02; done
  "$BUILD/bench/syscall_loop"
  kill -INT $e; wait $e || true
}
for r in 1 2 3; do
  echo "round $r: alone          $("$BUILD/bench/syscall_loop")"
  echo "round $r: host_waits on  $(under "$WORK/on.toml")"
  echo "round $r: host_waits off $(under "$WORK/off.toml")"
done
