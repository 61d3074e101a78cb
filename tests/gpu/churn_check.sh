#!/usr/bin/env bash
# Device check for memory under process churn: bench/churn_memory.sh with real CUDA
# processes (cuda_calls --gpu makes a context, allocates and launches on the GPU), under
# `serve` and `run` by default. Prints the bench's table, the counts and PASS/FAIL
# (growth per BATCH processes after the warm-up within 256 KiB per 2,000, counts exact).
#
# Usage: tests/gpu/churn_check.sh BIN_DIR [MODES] [WARMUP] [BATCH] [BATCHES]
#   BIN_DIR holds eacgm and cuda_calls; defaults: serve,run 1200 1000 2; PAR (processes
#   at once) defaults to the number of CPUs.
# Exit status: 0 pass, 1 fail, 77 no GPU.
set -uo pipefail
BIN="$(cd "${1:?usage: churn_check.sh BIN_DIR [MODES] [WARMUP] [BATCH] [BATCHES]}" && pwd)"
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"
[ -x "$BIN/eacgm" ] && [ -x "$BIN/cuda_calls" ] || { echo "FAIL: $BIN lacks eacgm or cuda_calls"; exit 1; }
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PAR=${PAR:-$(nproc)} CALLS_ARGS=--gpu
exec "$(dirname "$0")/../../bench/churn_memory.sh" "$BIN" "${2:-serve,run}" "${3:-1200}" "${4:-1000}" "${5:-2}"
