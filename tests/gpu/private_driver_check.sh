#!/usr/bin/env bash
# Device check of the private driver (`eacgm run --gpu-time --private-driver`, GPU
# machine, root): each workload (tests/gpu/fidelity_models.py's CNN and CUDA-graph MLP,
# bench/gpu/train_step.py's launch-bound loop) runs twice under `eacgm run --json
# --gpu-time --mode per-call`: as usual, and with its own copy of libcuda;
# tests/gpu/private_driver_compare.py checks that no driver uprobe reached the second and
# that the hook counted the same launches in both (and as many as the uprobes saw in the
# first). Then: the copy the hook made, a torch process's driver mapping, and what the
# setting costs a program's start (/bin/true and `import torch`, with and without).
# Usage: tests/gpu/private_driver_check.sh BIN_DIR [OUT_DIR]
#        (PRIVATE_WORKLOADS="cnn graph cpu-loop", also `compile`: a torch.compile'd model,
#        Triton's launchers linked against libcuda; STARTS=0 leaves out the start times)
# Exit status: 0 all pass, 1 a failure, 77 no GPU/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"
BIN=$(readlink -f "${1:?usage: private_driver_check.sh BIN_DIR [OUT_DIR]}")
OUT=${2:-$(mktemp -d /tmp/eacgm-private-driver.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
carry_libs "$BIN"
need_torch_gpu
export EACGM_PRIVATE_DRIVER=$OUT/driver
status=0
STEP="$HERE/../../bench/gpu/train_step.py"
for w in ${PRIVATE_WORKLOADS:-cnn graph cpu-loop}; do
  case $w in
    cpu-loop) cmd=("$PY" "$STEP" --size cpu --steps 500) ;;
    *) cmd=("$PY" "$HERE/fidelity_models.py" "$w" "$OUT/$w.trace.json") ;;
  esac
  for how in usual private; do
    extra=()
    [[ $how == private ]] && extra=(--private-driver)
    start=$(date +%s)
    EACGM_PRIVATE_DRIVER=$([[ $how == private ]] && echo "$EACGM_PRIVATE_DRIVER") \
      "$BIN/eacgm" run --json --mode per-call --probes cuda,cuda_driver --gpu-time "${extra[@]}" -- \
      "${cmd[@]}" >"$OUT/$w.$how.json" 2>"$OUT/$w.$how.err"
    rc=$?
    echo "== $w, $how ($(( $(date +%s) - start )) s, eacgm exit $rc)"
    if [[ $rc -ne 0 || ! -s "$OUT/$w.$how.json" ]]; then
      tail -n 5 "$OUT/$w.$how.err"; echo "FAIL: $w ($how) did not run"; status=1; continue 2
    fi
  done
  "$PY" "$HERE/private_driver_compare.py" "$w" "$OUT/$w.usual.json" "$OUT/$w.private.json" || status=1
done
echo "== the copy"
ls -l "$EACGM_PRIVATE_DRIVER"
maps=$(LD_PRELOAD="$BIN/libeacgm_hook.so" "$PY" -c 'import torch, re
torch.zeros(1, device="cuda")
print(" ".join(sorted({l.split()[-1] for l in open("/proc/self/maps") if re.search(r"libcuda", l)})))')
echo "torch's driver mapping with the setting: $maps"
if [[ $maps == *"/eacgm-libcuda.so."* && $maps != *"/libcuda.so"* ]]; then
  echo "PASS: torch runs the copy only"
else
  echo "FAIL: torch maps $maps"; status=1
fi
if [[ ${STARTS:-1} == 0 ]]; then rm -rf "$EACGM_PRIVATE_DRIVER"; exit $status; fi
echo "== a program's start with the setting (ms each, median of 5 rounds)"
starts() {  # N CMD...: median ms per run over 5 rounds of N runs
  local n=$1; shift
  for _ in 1 2 3 4 5; do
    local t0 t1
    t0=$(date +%s%N)
    for _ in $(seq "$n"); do "$@" >/dev/null 2>&1; done
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / n / 1000 ))
  done | sort -n | sed -n 3p | awk '{printf "%.2f", $1 / 1000}'
}
h="$BIN/libeacgm_hook.so"
printf '  %-26s %10s %10s %10s\n' program plain hook "hook+copy"
printf '  %-26s %10s %10s %10s\n' /bin/true "$(starts 200 /bin/true)" \
  "$(starts 200 env LD_PRELOAD="$h" EACGM_PRIVATE_DRIVER= /bin/true)" \
  "$(starts 200 env LD_PRELOAD="$h" /bin/true)"
printf '  %-26s %10s %10s %10s\n' "python3 -c 'import torch'" "$(starts 1 "$PY" -c 'import torch')" \
  "$(starts 1 env LD_PRELOAD="$h" EACGM_PRIVATE_DRIVER= "$PY" -c 'import torch')" \
  "$(starts 1 env LD_PRELOAD="$h" "$PY" -c 'import torch')"
rm -rf "$EACGM_PRIVATE_DRIVER"  # the copy (96 MB for driver 580)
exit $status
