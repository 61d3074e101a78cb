#!/usr/bin/env bash
# Device check of NCCL bus bandwidth from GPU time on 2 GPUs (root): the sweep of
# tests/gpu/nccl_gpu_sweep.py (all-reduce, all-gather, reduce-scatter, 1 MiB to 1 GiB)
# under `eacgm run --gpu-time --json` with PyTorch's profiler around the measured calls;
# tests/gpu/nccl_gpu_compare.py checks each size's busbw against the profiler's kernel
# times through the same formula, within 10%. Then nccl_analysis_check.sh's planted slow
# rank under --gpu-time: the straggler is still named.
# Usage: tests/gpu/nccl_gpu_time_check.sh BIN_DIR [OUT_DIR]   (SWEEP_ITERS, SWEEP_MAX_MIB)
# Exit status: 0 pass, 1 a difference, 77 fewer than 2 GPUs or no PyTorch.
set -uo pipefail
BIN=$(readlink -f "${1:?usage: nccl_gpu_time_check.sh BIN_DIR [OUT_DIR]}")
OUT=${2:-$(mktemp -d /tmp/eacgm-nccl-gpu.XXXXXX)}
PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/sweep" "$OUT/slow"
[[ -d "$BIN/lib" ]] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
skip() { echo "SKIP: $*" >&2; exit 77; }
[[ -x "$PY" ]] || skip "$PY not found"
[[ $(nvidia-smi -L 2>/dev/null | wc -l) -ge 2 ]] || skip "fewer than 2 GPUs"
status=0
start=$(date +%s)
"$BIN/eacgm" run --json --no-gpu --gpu-time --probes cuda,cuda_driver,nccl -- \
  "$PY" -m torch.distributed.run --nproc_per_node 2 "$HERE/nccl_gpu_sweep.py" "$OUT/sweep" \
  "${SWEEP_ITERS:-20}" "${SWEEP_MAX_MIB:-1024}" >"$OUT/sweep/run.json" 2>"$OUT/sweep/run.err"
rc=$?
echo "== sweep ($(( $(date +%s) - start )) s, eacgm exit $rc)"
grep -E "^eacgm: (tracing|done)" "$OUT/sweep/run.err"
if [[ $rc -ne 0 ]]; then tail -n 20 "$OUT/sweep/run.err"; echo "FAIL: the sweep did not run"; status=1
else "$PY" "$HERE/nccl_gpu_compare.py" "$OUT/sweep/run.json" "$OUT/sweep" || status=1
fi
"$BIN/eacgm" run --no-gpu --gpu-time --probes cuda,cuda_driver,nccl -- \
  "$PY" -m torch.distributed.run --nproc_per_node 2 "$HERE/nccl_gpu_sweep.py" "$OUT/sweep" 5 4 \
  >"$OUT/sweep/table.txt" 2>&1
sed -n '/^nccl on the GPU/,/^$/p' "$OUT/sweep/table.txt" | head -20
EACGM_RUN_ARGS="--gpu-time" "$HERE/nccl_analysis_check.sh" "$BIN/eacgm" "$OUT/slow" || status=1
exit $status
