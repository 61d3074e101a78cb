#!/usr/bin/env bash
# Step-time overhead on the GPU machine: the GPT-style loops of train_step.py untraced,
# under `eacgm run` as it ships (`default`: always-on, the duty cycle keeping the budget),
# always-on with every call counted (`always-on`: `duty_cycle = false`), per call (both
# API layers, as `trace` ships) and per call with `[trace] one_layer = true` (`one-layer`),
# and under PyTorch's profiler, as separate processes interleaved in rounds; medians per mode,
# ratios to untraced, and the launch counts of the eacgm modes (always-on must equal per
# call; the default's are estimates where the duty cycle scaled them, given for every round
# with their stated error).
# Usage: bench/gpu/overhead_rounds.sh EACGM [ROUNDS] [STEPS] [SIZES]
#   (SIZES: "gpu cpu" by default; PY: the torch interpreter; MODES: the modes to run
#   besides untraced, "default always-on per-call profiler" by default; "one-layer" too
#   where asked)
set -uo pipefail
EACGM=$1 ROUNDS=${2:-3} STEPS=${3:-200} SIZES=${4:-"gpu cpu"}
MODES=${MODES:-"default always-on per-call profiler"}
wanted() { [[ " $MODES " == *" $1 "* ]]; }
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
launches() {  # kernels launched, from run --json documents: driver launches not nested, runtime launches
  # (with each estimate's stated error, the functions' in quadrature, where there is one)
  "$PY" -c '
import json, math, sys
out = []
for path in sys.argv[1:]:
    d = json.load(open(path))
    rows = [f for f in d["functions"]
            if f["function"] in ("cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernel", "cudaLaunchKernelExC",
                                 "cuLaunchKernel_ptsz", "cuLaunchKernelEx_ptsz", "cudaLaunchKernel_ptsz")]
    n = sum(f["calls"] for f in rows)
    err = math.sqrt(sum((f.get("calls_error") or 0) ** 2 for f in rows))
    out.append(f"{n}" + (f"±{err:.0f}" if err > 0 else ""))
print(" ".join(out))' "$@"
}
printf '[trace]\nduty_cycle = false\n' >"$TMP/exact.toml"
printf '[trace]\none_layer = true\n' >"$TMP/one_layer.toml"
for size in $SIZES; do
  train=("$PY" "$HERE/train_step.py" --size "$size" --steps "$STEPS")
  for r in $(seq "$ROUNDS"); do
    "${train[@]}" 2>/dev/null | step_of >>"$TMP/$size.untraced"
    if wanted default; then
      "$EACGM" run --no-gpu --json -- "${train[@]}" >"$TMP/$size.def.$r.json" 2>"$TMP/$size.def.err"
      step_of <"$TMP/$size.def.err" >>"$TMP/$size.default"
    fi
    if wanted always-on; then
      "$EACGM" run --no-gpu --json --config "$TMP/exact.toml" --mode always-on -- "${train[@]}" >"$TMP/$size.on.$r.json" 2>"$TMP/$size.on.err"
      step_of <"$TMP/$size.on.err" >>"$TMP/$size.always-on"
    fi
    if wanted per-call; then
      "$EACGM" run --no-gpu --json --mode per-call -- "${train[@]}" >"$TMP/$size.pc.$r.json" 2>"$TMP/$size.pc.err"
      step_of <"$TMP/$size.pc.err" >>"$TMP/$size.per-call"
    fi
    if wanted one-layer; then
      "$EACGM" run --no-gpu --json --config "$TMP/one_layer.toml" --mode per-call -- "${train[@]}" >"$TMP/$size.ol.$r.json" 2>"$TMP/$size.ol.err"
      step_of <"$TMP/$size.ol.err" >>"$TMP/$size.one-layer"
    fi
    wanted profiler && "${train[@]}" --profile 2>/dev/null | step_of >>"$TMP/$size.profiler"
  done
  base=$(median <"$TMP/$size.untraced")
  printf '%-4s %-10s %9s %8s %s\n' size mode step_ms ratio spread
  for mode in untraced $MODES; do
    m=$(median <"$TMP/$size.$mode")
    printf '%-4s %-10s %9s %8s %s\n' "$size" "$mode" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN{printf "%.4f", m/b}')" \
      "$(spread <"$TMP/$size.$mode")"
  done
  line="$size launches (whole run, warm-up included):"
  wanted default && line="$line default $(launches "$TMP/$size".def.*.json)"
  wanted always-on && line="$line always-on $(launches "$TMP/$size.on.1.json")"
  wanted per-call && line="$line per-call $(launches "$TMP/$size.pc.1.json")"
  wanted one-layer && line="$line one-layer $(launches "$TMP/$size.ol.1.json")"
  echo "$line"
  wanted always-on && grep -o 'done.*' "$TMP/$size.on.err" | head -1 | sed "s/^/$size always-on accounting: /"
  wanted default && "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
o = d.get("overhead", {})
print(sys.argv[2], "default, last round: duty_fraction", o.get("duty_fraction"), "attached_share", o.get("attached_share"))' "$TMP/$size.def.$ROUNDS.json" "$size"
done
