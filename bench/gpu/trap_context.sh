#!/usr/bin/env bash
# Why a counted call costs a PyTorch step more than a trap costs a tight loop: the
# address-space changes of the step's process (each makes the uprobe path's lock-free
# lookup of the probe fall back to the address space's lock), and what counting costs
# the step with and without them.
#   1. bench/trap_working_set.sh: an empty uprobe's cost to a loop with a data or code
#      working set, or with threads mapping and unmapping memory meanwhile;
#   2. eacgm-bench-syscalls: the CPU-bound train_step.py's system calls for 5 s, with
#      glibc's and CPython's allocators as they are, and with both kept from returning
#      memory (PYTHONMALLOC=malloc, one arena, no trimming, no mmap below 32 MiB);
#   3. bench/gpu/window_cost.sh (counted steps against uncounted ones, in one process) in
#      both settings.
# Usage: bench/gpu/trap_context.sh EACGM BUILD [STEPS]
#   (BUILD holds working_set_loop, eacgm-bench-bare and eacgm-bench-syscalls)
set -uo pipefail
EACGM=$1 BUILD=$2 STEPS=${3:-3000}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
KEEP=(PYTHONMALLOC=malloc MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432
  MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456)
echo "== 1. empty uprobe against the caller's working set and threads"
bash "$HERE/../trap_working_set.sh" "$BUILD" 100000
for setting in default kept; do
  envs=()
  [ "$setting" = kept ] && envs=("${KEEP[@]}")
  echo "== 2. system calls of the CPU-bound step, allocators $setting"
  env "${envs[@]}" "$PY" "$HERE/train_step.py" --size cpu --steps 1500 >/tmp/trap_context.out 2>&1 &
  py=$!
  sleep 12
  "$BUILD/eacgm-bench-syscalls" "$py" 5 | head -12
  wait "$py"
  grep -o 'step_ms=[0-9.]*' /tmp/trap_context.out
  echo "== 3. counted against uncounted steps, allocators $setting"
  env "${envs[@]}" bash "$HERE/window_cost.sh" "$EACGM" cpu "$STEPS" 0.4
done
