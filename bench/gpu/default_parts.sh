#!/usr/bin/env bash
# What `eacgm run` as shipped costs a training step, part by part: train_step.py untraced,
# under the default configuration, without Python stack sampling (`--python-hz 0`), and
# without that and the host-wait tracer (`[trace] host_waits = false`), as separate
# processes interleaved in rounds; medians, ratios to untraced, and the default's last
# duty fraction. Where the cycled probes sit at their floor and the step is still slower,
# this tells which of the parts that are never cycled pays.
# Usage: bench/gpu/default_parts.sh EACGM [ROUNDS] [STEPS] [SIZE]   (SIZE: cpu or gpu; PY: the
#   torch interpreter)
set -uo pipefail
EACGM=$1 ROUNDS=${2:-3} STEPS=${3:-1000} SIZE=${4:-cpu}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
printf '[trace]\nhost_waits = false\n' >"$TMP/lean.toml"
train=("$PY" "$HERE/train_step.py" --size "$SIZE" --steps "$STEPS")
for r in $(seq "$ROUNDS"); do
  "${train[@]}" 2>/dev/null | step_of >>"$TMP/untraced"
  "$EACGM" run --no-gpu --json -- "${train[@]}" >"$TMP/default.json" 2>"$TMP/err"
  step_of <"$TMP/err" >>"$TMP/default"
  "$EACGM" run --no-gpu --json --python-hz 0 -- "${train[@]}" >/dev/null 2>"$TMP/err"
  step_of <"$TMP/err" >>"$TMP/no-python"
  "$EACGM" run --no-gpu --json --python-hz 0 --config "$TMP/lean.toml" -- "${train[@]}" >/dev/null 2>"$TMP/err"
  step_of <"$TMP/err" >>"$TMP/no-waits"
done
base=$(median <"$TMP/untraced")
printf '%-4s %-10s %9s %8s %s\n' size run step_ms ratio spread
for run in untraced default no-python no-waits; do
  m=$(median <"$TMP/$run")
  printf '%-4s %-10s %9s %8s %s\n' "$SIZE" "$run" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN{printf "%.4f", m/b}')" \
    "$(spread <"$TMP/$run")"
done
"$PY" -c '
import json, sys
o = json.load(open(sys.argv[1])).get("overhead", {})
print("default, last round: duty_fraction", o.get("duty_fraction"), "attached_share", o.get("attached_share"))' "$TMP/default.json"
