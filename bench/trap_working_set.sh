#!/usr/bin/env bash
# What an empty entry uprobe costs a caller whose data working set is large: the
# working_set_loop program untraced and with eacgm-bench-bare's empty entry program on
# its ws_target function, for a few buffer sizes (KiB) and reads per call.
# Usage: bench/trap_working_set.sh BUILD [ITERS]   (root)
set -uo pipefail
BUILD=$1 ITERS=${2:-100000}
LOOP=$BUILD/working_set_loop BARE=$BUILD/eacgm-bench-bare
printf '%-10s %-6s %12s %12s %10s\n' KiB reads untraced_ns uprobe_ns added_ns
for cfg in "0 0" "1024 64" "32768 64" "32768 256" "262144 256"; do
  set -- $cfg
  plain=$("$LOOP" "$ITERS" "$1" "$2")
  "$BARE" "$LOOP" ws_target entry >/dev/null 2>&1 &
  bare=$!
  sleep 0.5
  probed=$("$LOOP" "$ITERS" "$1" "$2")
  kill -INT "$bare"
  wait "$bare" 2>/dev/null
  printf '%-10s %-6s %12s %12s %10s\n' "$1" "$2" "$plain" "$probed" "$(awk -v a="$plain" -v b="$probed" 'BEGIN{print b-a}')"
done
