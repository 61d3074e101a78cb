#!/usr/bin/env bash
# What an empty entry uprobe costs a caller whose working set is large: the
# working_set_loop program untraced and with eacgm-bench-bare's empty entry program on
# its ws_target function, for a few data working sets (KiB of buffer, reads per call),
# code working sets (KiB of generated code, calls of it per call) and numbers of threads
# mapping and unmapping memory meanwhile.
# Usage: bench/trap_working_set.sh BUILD [ITERS]   (root)
set -uo pipefail
BUILD=$1 ITERS=${2:-100000}
LOOP=$BUILD/working_set_loop BARE=$BUILD/eacgm-bench-bare
printf '%-8s %-6s %-8s %-6s %-8s %12s %12s %10s\n' data_KiB reads code_KiB calls threads untraced_ns uprobe_ns added_ns
for cfg in "0 0 0 0 0" "1024 64 0 0 0" "32768 64 0 0 0" "32768 256 0 0 0" "262144 256 0 0 0" \
  "0 0 256 16 0" "0 0 1024 16 0" "0 0 4096 32 0" "0 0 16384 64 0" "0 0 0 0 1" "0 0 0 0 4" \
  "0 0 4096 32 4"; do
  set -- $cfg
  plain=$("$LOOP" "$ITERS" "$@")
  "$BARE" "$LOOP" ws_target entry >/dev/null 2>&1 &
  bare=$!
  sleep 0.5
  probed=$("$LOOP" "$ITERS" "$@")
  kill -INT "$bare"
  wait "$bare" 2>/dev/null
  printf '%-8s %-6s %-8s %-6s %-8s %12s %12s %10s\n' "$@" "$plain" "$probed" \
    "$(awk -v a="$plain" -v b="$probed" 'BEGIN{print b-a}')"
done
