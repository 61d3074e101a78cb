#!/usr/bin/env bash
# What an EMPTY probe costs a training step, in one process: window_cost.sh's comparison
# with eacgm-bench-bare in place of eacgm. The bare program (MODE: session, an empty
# uprobe session program that declines the return; count, one that only counts the call
# per process; entry, an empty entry program) is attached to libcuda's GPU-work functions
# (the ones eacgm's duty cycle switches: launches, copies, memsets) for FRACTION of every
# second (BARE_CYCLE) while train_step.py logs its steps; bench/gpu/window_cost.py compares
# steps inside the windows with steps between them. Next to window_cost.sh's figure for
# eacgm on the same loop, this shows how much of a counted call's cost in a real step is
# the kernel's trap itself, with no program work at all.
# With HOOK=libeacgm_hook.so the loop carries the hook, counting its launches exactly with
# GPU timing paused (train_step.py --paused); with BARE_PID=P the programs' link is
# limited to process P (uprobe_multi's pid), so another P leaves the loop no breakpoint;
# with PRIVATE=DIR too, the loop runs its own copy of libcuda from DIR (the hook's
# EACGM_PRIVATE_DRIVER), which the programs on the usual libcuda never reach.
# Usage: bench/gpu/bare_window_cost.sh BIN_DIR [SIZE] [STEPS] [FRACTION] [MODE]
#   (BIN_DIR holds eacgm-bench-bare; SIZE: cpu or gpu; PY: the torch interpreter)
set -uo pipefail
BIN=$1 SIZE=${2:-cpu} STEPS=${3:-3000} FRACTION=${4:-0.4} MODE=${5:-session}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
# The libcuda the torch process will load.
LIB=$("$PY" -c 'import torch, re
torch.zeros(1, device="cuda")
for line in open("/proc/self/maps"):
    if re.search(r"/libcuda\.so", line):
        print(line.split()[-1]); break')
[ -n "$LIB" ] || { echo "no libcuda mapped by a torch process"; exit 1; }
SYMS=cuLaunchKernel,cuLaunchKernelEx,cuMemcpyAsync,cuMemcpyHtoDAsync_v2,cuMemcpyDtoHAsync_v2,cuMemcpyDtoDAsync_v2
SYMS=$SYMS,cuMemsetD8Async,cuMemsetD16Async,cuMemsetD32Async,cuMemsetD2D8Async,cuMemsetD2D16Async,cuMemsetD2D32Async
BARE_CYCLE=$FRACTION BARE_SWITCHES="$TMP/switches" "$BIN/eacgm-bench-bare" "$LIB" "$SYMS" "$MODE" >"$TMP/bare.out" 2>&1 &
bare=$!
for _ in $(seq 500); do grep -q attached "$TMP/bare.out" 2>/dev/null && break; sleep 0.01; done
grep -q attached "$TMP/bare.out" || { echo "eacgm-bench-bare did not attach:"; cat "$TMP/bare.out"; exit 1; }
loop=("$PY" "$HERE/train_step.py" --size "$SIZE" --steps "$STEPS" --step-log "$TMP/steps")
[ -n "${HOOK:-}" ] &&
  loop=(env LD_PRELOAD="$HOOK" EACGM_GPU_TIME=1 EACGM_PRIVATE_DRIVER="${PRIVATE:-}" "${loop[@]}" --paused)
"${loop[@]}" 2>/dev/null | step_of >"$TMP/step"
kill -INT "$bare"
wait "$bare"
echo "== $SIZE: $(cat "$TMP/step") ms per step overall; empty '$MODE' programs on $LIB held at $FRACTION" \
  "(${BARE_PID:+limited to pid $BARE_PID, }${HOOK:+the loop carries the hook, counting}${PRIVATE:+, with its own copy of libcuda})"
grep -v '^attached' "$TMP/bare.out"
"$PY" "$HERE/window_cost.py" "$TMP/switches" "$TMP/steps"
[ -n "${OUT:-}" ] && cp "$TMP/switches" "$TMP/steps" "$OUT"/ 2>/dev/null
true
