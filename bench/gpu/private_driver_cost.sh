#!/usr/bin/env bash
# What the uprobes on libcuda cost a process that carries the hook, with and without its
# own copy of the driver (the hook's EACGM_PRIVATE_DRIVER), on the GPU machine: in one
# launch-bound loop (train_step.py, counting through the hook, timing paused), empty
# uprobe session programs on libcuda's GPU-work functions held at FRACTION of every
# second (bench/gpu/bare_window_cost.sh); steps inside the windows against steps between.
#   1. the loop on the usual libcuda: the programs' breakpoints are in it (the least a
#      per-file probe costs it, declining at entry);
#   2. the loop on its own copy: the programs' file is not the one it runs.
# Usage: bench/gpu/private_driver_cost.sh BIN_DIR [SIZE] [STEPS] [FRACTION]
#   (BIN_DIR holds libeacgm_hook.so and eacgm-bench-bare)
set -uo pipefail
BIN=$(cd "$1" && pwd) SIZE=${2:-cpu} STEPS=${3:-3000} FRACTION=${4:-0.4}
HERE=$(cd "$(dirname "$0")" && pwd)
copies=$(mktemp -d /tmp/eacgm-private-driver-cost.XXXXXX)
echo "### 1. the usual libcuda"
HOOK="$BIN/libeacgm_hook.so" bash "$HERE/bare_window_cost.sh" "$BIN" "$SIZE" "$STEPS" "$FRACTION" session
echo "### 2. its own copy ($copies)"
PRIVATE=$copies HOOK="$BIN/libeacgm_hook.so" bash "$HERE/bare_window_cost.sh" "$BIN" "$SIZE" "$STEPS" "$FRACTION" session
rm -rf "$copies"
