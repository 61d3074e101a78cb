#!/usr/bin/env bash
# Device check of GPU time through the hook (GPU machine, root): a GPT-style decoder and a
# CNN (tests/gpu/gpu_time_models.py) run under `eacgm run --gpu-time --json` with PyTorch's
# profiler over the same steps; tests/gpu/gpu_time_compare.py checks every kernel's p50
# against the profiler's (CUPTI) within 5% for kernels of 20 us or more (10 to 20 us
# listed). Then short runs
# (GPU_TIME_SHORT_S seconds, 5, timed from the first launch, warm-up included) of the GPT
# and of GEMMs alternating between two sizes with one kernel name and shape: every kernel
# launched 100 times or more timed at least 10 times, and shapes timed 20 times or more
# within 5% (gpu_time_compare.py --short).
# Then the same program without an agent, to see that the hook leaves nothing in /dev/shm.
# Usage: tests/gpu/gpu_time_check.sh BIN_DIR [OUT_DIR]
#   (GPU_TIME_WORKLOADS="gpt cnn", GPU_TIME_SHORT_WORKLOADS="gpt alt", GPU_TIME_SHORT_S=5)
# Exit status: 0 pass, 1 a difference, 77 no GPU/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"
BIN=$(readlink -f "${1:?usage: gpu_time_check.sh BIN_DIR [OUT_DIR]}")
OUT=${2:-$(mktemp -d /tmp/eacgm-gpu-time.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
carry_libs "$BIN"
need_torch_gpu
status=0
for w in ${GPU_TIME_WORKLOADS-gpt cnn}; do
  start=$(date +%s)
  "$BIN/eacgm" run --json --no-gpu --gpu-time -- "$PY" "$HERE/gpu_time_models.py" "$w" "$OUT/$w.prof.json" \
    "${GPU_TIME_STEPS:-200}" >"$OUT/$w.eacgm.json" 2>"$OUT/$w.err"
  rc=$?
  echo "== $w ($(( $(date +%s) - start )) s, eacgm exit $rc)"
  if [[ $rc -ne 0 || ! -s "$OUT/$w.prof.json" ]]; then
    tail -n 5 "$OUT/$w.err"; echo "FAIL: $w did not run"; status=1; continue
  fi
  "$PY" "$HERE/gpu_time_compare.py" "$w" "$OUT/$w.eacgm.json" "$OUT/$w.prof.json" || status=1
done
for w in ${GPU_TIME_SHORT_WORKLOADS-gpt alt}; do
  start=$(date +%s)
  GPU_TIME_SECONDS=${GPU_TIME_SHORT_S:-5} "$BIN/eacgm" run --json --no-gpu --gpu-time -- "$PY" \
    "$HERE/gpu_time_models.py" "$w" "$OUT/$w.short.prof.json" >"$OUT/$w.short.eacgm.json" 2>"$OUT/$w.short.err"
  rc=$?
  echo "== $w, short run ($(( $(date +%s) - start )) s, eacgm exit $rc)"
  if [[ $rc -ne 0 || ! -s "$OUT/$w.short.prof.json" ]]; then
    tail -n 5 "$OUT/$w.short.err"; echo "FAIL: $w (short) did not run"; status=1; continue
  fi
  "$PY" "$HERE/gpu_time_compare.py" "$w-short" "$OUT/$w.short.eacgm.json" "$OUT/$w.short.prof.json" --short || status=1
done
before=$(ls /dev/shm | grep -c '^eacgm-gpu-time\.' || true)
LD_PRELOAD="$BIN/libeacgm_hook.so" EACGM_GPU_TIME=1 "$PY" -c 'import torch; x = torch.ones(1 << 20, device="cuda"); [x.mul_(1.0001) for _ in range(1000)]; torch.cuda.synchronize()'
after=$(ls /dev/shm | grep -c '^eacgm-gpu-time\.' || true)
if [[ "$after" -le "$before" ]]; then echo "PASS: the hook alone leaves no ring in /dev/shm"; else echo "FAIL: rings left in /dev/shm: $after (before: $before)"; status=1; fi
exit $status
