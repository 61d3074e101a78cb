#!/usr/bin/env bash
# Device check of launch fidelity (GPU machine, root): PyTorch workloads, each traced by
# `eacgm run --json` and profiled by PyTorch's profiler over the same work
# (tests/gpu/fidelity_models.py), compared by tests/gpu/fidelity_compare.py: kernels,
# memsets, copies and kernel names must be equal, in either mode (the default, always-on,
# records the work made while a stream capture is open, so graph replays count exactly).
#   cnn      a bf16 CNN through cuDNN and cuBLAS (their own static runtimes: launches reach
#            only libcuda's cuLaunchKernelEx, memsets only cuMemsetD*Async)
#   graph    an MLP step captured in a CUDA graph and replayed 10 times
#   compile  a torch.compile'd model (Triton kernels, names over 64 bytes)
#   reduce   inference through torch.compile(mode="reduce-overhead"): CUDA graphs captured
#            by PyTorch's cudagraph trees, then replayed
# About 5-7 minutes (torch.compile dominates).
#
# Usage: tests/gpu/fidelity_check.sh BIN_DIR [OUT_DIR]   (BIN_DIR holds eacgm; EACGM_MODE=per-call
# checks the per-call mode instead of always-on; FIDELITY_WORKLOADS="cnn graph": only these;
# EACGM_CONFIG=FILE: run eacgm with this configuration, e.g. `[trace] one_layer = true`)
# Exit status: 0 all equal, 1 a difference, 77 no GPU/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"
BIN=$(readlink -f "${1:?usage: fidelity_check.sh BIN_DIR [OUT_DIR]}")
OUT=${2:-$(mktemp -d /tmp/eacgm-fidelity.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
carry_libs "$PWD/.devcarry"
need_torch_gpu

status=0
for w in ${FIDELITY_WORKLOADS:-cnn graph compile reduce}; do
  start=$(date +%s)
  "$BIN/eacgm" run --json --no-gpu --mode "${EACGM_MODE:-always-on}" --probes cuda,cuda_driver \
    ${EACGM_CONFIG:+--config "$EACGM_CONFIG"} -- \
    "$PY" "$HERE/fidelity_models.py" "$w" "$OUT/$w.trace.json" >"$OUT/$w.eacgm.json" 2>"$OUT/$w.err"
  rc=$?
  echo "== $w ($(( $(date +%s) - start )) s, eacgm exit $rc)"
  if [[ $rc -ne 0 || ! -s "$OUT/$w.trace.json" ]]; then
    tail -5 "$OUT/$w.err"; status=1; continue
  fi
  "$PY" "$HERE/fidelity_compare.py" "$w" "$OUT/$w.eacgm.json" "$OUT/$w.trace.json" || status=1
  grep -o 'accounting:.*\|warning:.*' "$OUT/$w.err" | head -3
done
echo "outputs in $OUT"
exit $status
