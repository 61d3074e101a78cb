#!/usr/bin/env bash
# `eacgm top`'s own CPU use: it runs in a tmux pane (160x40) against a serve that traces
# capture_calls, refreshing every second, for SECONDS; its user+system CPU time from
# /proc/PID/stat over that time, as a share of one core.
# Usage: bench/top_cpu.sh [BUILD_DIR] [SECONDS] [PORT]
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
SECONDS_RUN=${2:-60}
PORT=${3:-19982}
. "$(dirname "$0")/common.sh"
"$B/eacgm" serve --listen "127.0.0.1:$PORT" --probes cuda_driver --no-gpu --store off 2>"$TMP/serve.err" &
SERVE=$!
trap 'tmux kill-session -t eacgm-top-bench 2>/dev/null; kill -TERM $SERVE 2>/dev/null; wait $SERVE 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
"$B/capture_calls" --seconds $((SECONDS_RUN + 10)) --log "$TMP/calls.log" >/dev/null &
tmux new-session -d -s eacgm-top-bench -x 160 -y 40 "$B/eacgm top --server http://127.0.0.1:$PORT"
sleep 3
TOP=$(pgrep -n -f "eacgm top --server http://127.0.0.1:$PORT")
ticks() { awk '{print $14 + $15}' "/proc/$TOP/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
sleep "$SECONDS_RUN"
t1=$(ticks)
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$SECONDS_RUN" \
  'BEGIN {printf "eacgm top: %.2f s of CPU over %d s = %.2f%% of a core\n", (b - a) / hz, s, 100 * (b - a) / hz / s}'
