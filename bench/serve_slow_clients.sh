#!/usr/bin/env bash
# /metrics latency of `eacgm serve --no-gpu` (root) alone and while 64 slow, idle and
# half-sent connections are held open (bench/slow_clients.py), then the server's own
# count of the connections it closed, by reason.
# Usage: [PORT=19978] bench/serve_slow_clients.sh [BUILD_DIR] [SCRAPES] [HOSTILE]
set -euo pipefail
B=${1:-build}
SCRAPES=${2:-400}
HOSTILE=${3:-64}
PORT=${PORT:-19978}
. "$(cd "$(dirname "$0")" && pwd)/serve_common.sh"

"$B/eacgm" serve --no-gpu --listen "127.0.0.1:$PORT" 2> "$TMP/serve.err" &
pid=$!
client wait "$PORT" /readyz 30 || { cat "$TMP/serve.err" >&2; exit 1; }
sleep 3  # start-up (attaching, the first passes) is not the steady state
"$PY" "$HERE/slow_clients.py" "$PORT" "$SCRAPES" "$HOSTILE"
client get "$PORT" /metrics | grep -E '^eacgm_http_(open_connections|header_timeouts_total|body_timeouts_total|idle_timeouts_total|connections_shed_total|overloaded_total) '
