#!/usr/bin/env bash
# Per-call mode (`eacgm run --mode per-call`) of two eacgm builds, A and B, against
# untraced runs, interleaved in rounds on the GPU machine:
# - the hot loop `cuda_loop --call sync`: cudaStreamSynchronize(0), which reaches libcuda's
#   cuStreamSynchronize, a nested call (ns per call);
# - train_step.py's CPU-bound GPT-style loop (median step time), whose launches reach
#   libcuda's cuLaunchKernel inside cudaLaunchKernel.
# Prints medians, ratios to untraced, and each build's counts over the last round (kernels
# launched, by the runtime or at the driver outside a runtime call, synchronisations,
# calls flagged nested); kernels must agree between A and B.
# CALL=free_null: the loop calls cudaFree(NULL) instead; PROBES: what the loop's runs probe
# (default: run's catalogs, cuda,cuda_driver,nccl); A_CONFIG, B_CONFIG: a configuration
# file for A's or B's runs (one build against itself: `[trace] one_layer = true` as B).
# The hot loop and the agent run pinned to CPUs of their own (LOOP_CPU, AGENT_CPU: 2, 3).
# Usage: bench/gpu/per_call_ab.sh A B [ROUNDS] [STEPS] [ITERS]   (STEPS 0: the loop only)
#   (A, B: eacgm binaries; LOOP: cuda_loop, by default the one in B's folder; PY: the torch
#   interpreter)
set -uo pipefail
A=$1 B=$2 ROUNDS=${3:-3} STEPS=${4:-300} ITERS=${5:-200000}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
LOOP=${LOOP:-$(dirname "$(readlink -f "$B")")/cuda_loop}
CU13=$("$PY" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))')
counts() {  # kernels launched, stream synchronisations and nested calls, from a run --json document
  "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["functions"]
def calls(names): return sum(x["calls"] for x in f if x["function"] in names)  # nested ones are not in calls
launch = calls(("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"))
syncs = calls(("cudaStreamSynchronize", "cuStreamSynchronize"))
nested = sum(x.get("nested", 0) for x in f)
print("kernels", launch, "stream synchronisations", syncs, "nested", nested)' "$1"
}
loop=(env LD_LIBRARY_PATH="$CU13" taskset -c "${LOOP_CPU:-2}" "$LOOP" --iters "$ITERS" --call "${CALL:-sync}")
agent=(taskset -c "${AGENT_CPU:-3}")
whats="loop"
[ "$STEPS" -gt 0 ] && whats="loop train"
train=("$PY" "$HERE/train_step.py" --size cpu --steps "$STEPS")
for r in $(seq "$ROUNDS"); do
  "${loop[@]}" | ns_of >>"$TMP/loop.untraced"
  [ "$STEPS" -gt 0 ] && "${train[@]}" 2>/dev/null | step_of >>"$TMP/train.untraced"
  for b in A B; do
    bin=${!b}
    cfg=${b}_CONFIG
    conf=()
    [ -n "${!cfg:-}" ] && conf=(--config "${!cfg}")
    "${agent[@]}" "$bin" run --no-gpu --json --mode per-call "${conf[@]}" --probes "${PROBES:-cuda,cuda_driver,nccl}" -- "${loop[@]}" >"$TMP/loop.$b.json" 2>"$TMP/loop.$b.err"
    ns_of <"$TMP/loop.$b.err" >>"$TMP/loop.$b"
    [ "$STEPS" -gt 0 ] || continue
    "$bin" run --no-gpu --json --mode per-call "${conf[@]}" -- "${train[@]}" >"$TMP/train.$b.json" 2>"$TMP/train.$b.err"
    step_of <"$TMP/train.$b.err" >>"$TMP/train.$b"
  done
done
printf '%-6s %-9s %10s %8s %s\n' what run median ratio spread
for what in $whats; do
  base=$(median <"$TMP/$what.untraced")
  for run in untraced A B; do
    m=$(median <"$TMP/$what.$run")
    printf '%-6s %-9s %10s %8s %s\n' "$what" "$run" "$m" \
      "$(awk -v m="$m" -v b="$base" 'BEGIN{printf "%.4f", m/b}')" "$(spread <"$TMP/$what.$run")"
  done
  for b in A B; do echo "$what $b: $(counts "$TMP/$what.$b.json")"; done
done
