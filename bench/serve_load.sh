#!/usr/bin/env bash
# Serving under load (root, loopback only): the tight loop of traced calls of
# bench/overhead.sh on every core (cuda_loop, THREADS x ITERS cudaMalloc), traced by
# `eacgm serve --no-gpu` (default catalogs). Two phases, each with a fresh daemon:
#   quiet:  no HTTP client;
#   http:   one client hammers /metrics and /api/v1/functions back to back on one
#           keep-alive connection for as long as the loop runs (per-request latency).
# Each phase reports the calls made, the daemon's eacgm_events_total and
# eacgm_ring_buffer_drops_total read from /metrics once they settle, and the daemon's
# CPU time while the loop ran. A phase is cut at 30 s (the loop is killed).
# Usage: [THREADS=N] [PORT=19978] [REPS=1] bench/serve_load.sh [BUILD_DIR] [ITERS]
set -euo pipefail
B=${1:-build}
ITERS=${2:-10000000}
THREADS=${THREADS:-$(nproc)}
PORT=${PORT:-19978}
REPS=${REPS:-1}
. "$(cd "$(dirname "$0")" && pwd)/serve_common.sh"
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
metric() { { client get "$PORT" /metrics || true; } | awk -v m="$1" '$1 == m {printf "%d\n", $2}'; }

phase() {  # $1: quiet | http
  rm -f "$TMP/go"
  "$B/eacgm" serve --listen "127.0.0.1:$PORT" --no-gpu 2> "$TMP/serve.$1.err" &
  pid=$!
  client wait "$PORT" /readyz 30 || { cat "$TMP/serve.$1.err" >&2; exit 1; }
  "$B/cuda_loop" --threads "$THREADS" --iters "$ITERS" --wait-file "$TMP/go" > "$TMP/loop.out" &
  local loop=$!
  until grep -q ready "$TMP/loop.out" 2> /dev/null; do sleep 0.05; done
  # Wait until the daemon has attached to the loop's libcudart (new processes are found
  # by the daemon's exec and mmap tracking and its periodic rescan).
  for _ in $(seq 100); do
    [ "$(metric eacgm_libraries_attached)" -ge 1 ] 2> /dev/null && break
    sleep 0.1
  done
  local c0 t0 t1 hammer=
  c0=$(cpu_ticks "$pid")
  t0=$(date +%s.%N)
  touch "$TMP/go"
  if [ "$1" = http ]; then
    client hammer "$PORT" "$loop" /metrics /api/v1/functions > "$TMP/hammer.out" &
    hammer=$!
  fi
  ( sleep 30 && kill "$loop" 2> /dev/null && echo "phase cut at 30 s" >&2 ) &
  local watchdog=$!
  wait "$loop" || true
  t1=$(date +%s.%N)
  local c1
  c1=$(cpu_ticks "$pid")
  kill "$watchdog" 2> /dev/null || true
  [ -n "$hammer" ] && wait "$hammer"
  # The counters settle once the reader has drained the ring buffer (snapshots: 1 s).
  local prev=-1 events=0
  for _ in $(seq 20); do
    sleep 1.5
    events=$(metric eacgm_events_total)
    [ "$events" = "$prev" ] && break
    prev=$events
  done
  local drops calls
  drops=$(metric eacgm_ring_buffer_drops_total)
  # The loop's own count (its 1000 warm-up calls included: the daemon attaches to the
  # library when it is mapped, before them); none when the phase was cut.
  calls=$(sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/loop.out")
  calls=${calls:-0}
  kill -TERM "$pid"
  wait "$pid" || true
  pid=
  awk -v p="$1" -v c="$calls" -v e="$events" -v d="$drops" -v secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
      -v cpu="$((c1 - c0))" -v t="$ticks" -v ns="$(sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p' "$TMP/loop.out")" \
      -v h="$( [ -f "$TMP/hammer.out" ] && [ "$1" = http ] && cat "$TMP/hammer.out")" 'BEGIN {
    printf "%-6s loop %.1f s, %d calls (%.0f ns/call/thread): events=%d drops=%d (delivered %.2f%%, events+drops-calls=%d), daemon CPU %.2f s (%.0f%% of a core)\n",
      p, secs, c, ns, e, d, c ? 100 * e / c : 0, e + d - c, cpu / t, 100 * cpu / t / secs
    if (h != "") printf "       %s\n", h
  }'
  rm -f "$TMP/hammer.out"
}

echo "serve under load: $THREADS threads x $ITERS cudaMalloc, $(nproc) cores"
for _ in $(seq "$REPS"); do
  phase quiet
  phase http
done
