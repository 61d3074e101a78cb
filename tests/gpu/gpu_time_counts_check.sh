#!/usr/bin/env bash
# Device check of the hook's exact launch counts (GPU machine, root): the fidelity
# workloads (tests/gpu/fidelity_models.py: a cuDNN/cuBLAS CNN, a CUDA-graph MLP replayed
# 10 times, a torch.compile'd model) run under `eacgm run --json --gpu-time` in per-call
# mode, so the uprobes count every launch in the same run; tests/gpu/gpu_time_counts.py
# compares the two and prints each process's busy share beside NVML's SM utilization
# (NVML sampled every 0.2 s). Then the same for two steady training loops
# (bench/gpu/train_step.py: `gpu-loop`, GPU-bound, 150 steps; `cpu-loop`, launch-bound,
# 1,000 steps), where the busy share and NVML's utilization should agree.
# Usage: tests/gpu/gpu_time_counts_check.sh BIN_DIR [OUT_DIR]
#        (COUNTS_WORKLOADS="cnn graph compile gpu-loop cpu-loop")
# Exit status: 0 equal, 1 a difference, 77 no GPU/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"
BIN=$(readlink -f "${1:?usage: gpu_time_counts_check.sh BIN_DIR [OUT_DIR]}")
OUT=${2:-$(mktemp -d /tmp/eacgm-gpu-time-counts.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
carry_libs "$BIN"
need_torch_gpu
printf '[gpu]\ninterval_s = 0.2\n' >"$OUT/eacgm.toml"
status=0
STEP="$HERE/../../bench/gpu/train_step.py"
for w in ${COUNTS_WORKLOADS:-cnn graph compile gpu-loop cpu-loop}; do
  case $w in
    gpu-loop) cmd=("$PY" "$STEP" --size gpu --steps 150) ;;
    cpu-loop) cmd=("$PY" "$STEP" --size cpu --steps 1000) ;;
    *) cmd=("$PY" "$HERE/fidelity_models.py" "$w" "$OUT/$w.trace.json") ;;
  esac
  start=$(date +%s)
  "$BIN/eacgm" run --json --config "$OUT/eacgm.toml" --mode per-call --probes cuda,cuda_driver --gpu-time -- \
    "${cmd[@]}" >"$OUT/$w.eacgm.json" 2>"$OUT/$w.err"
  rc=$?
  echo "== $w ($(( $(date +%s) - start )) s, eacgm exit $rc)"
  if [[ $rc -ne 0 || ! -s "$OUT/$w.eacgm.json" ]]; then
    tail -n 5 "$OUT/$w.err"; echo "FAIL: $w did not run"; status=1; continue
  fi
  "$PY" "$HERE/gpu_time_counts.py" "$w" "$OUT/$w.eacgm.json" || status=1
done
exit $status
