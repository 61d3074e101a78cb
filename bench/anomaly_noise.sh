#!/usr/bin/env bash
# Anomalies raised by noise: a uniform CUDA loop (build/cuda_loop; without a GPU its calls
# fail at once inside libcudart, and the probes still fire) traced by `eacgm run --json`
# in the default always-on mode for SECONDS, while `stress-ng --cpu 2` loads the machine
# (LOAD below).
# Nothing is planted, so every flagged call and slow interval is noise. Three loops:
# cudaMalloc (an allocation: judged call by call), cudaStreamSynchronize (`--call sync`:
# judged as sampled buckets), and `sleep`: build/slow_calls's slow_step() traced by a
# `[[probe]]`, each call a 500 us sleep, whose wake-up waits for a free CPU (a call that
# waits, like a synchronisation, as the load on the machine swings). The binaries take
# turns per loop, so they see the same load. Prints per binary and loop the flagged calls
# (total and entries after coalescing), the slow intervals and their largest ratio.
# Usage: [LOOPS="malloc sync sleep"] [LOAD=steady|bursty] bench/anomaly_noise.sh SECONDS BUILD_DIR EACGM...
# (root; BUILD_DIR holds
# cuda_loop and slow_calls)
set -euo pipefail
SECS=$1 BUILD=$(readlink -f "$2")
shift 2
. "$(dirname "$0")/common.sh"
command -v stress-ng >/dev/null || { echo "stress-ng is needed (apt-get install stress-ng)" >&2; exit 1; }
cat >"$TMP/eacgm.toml" <<'TOML'
[[probe]]
name = "slow_step"
domain = "user"
library = "libeacgm_slow.so*"
symbol = "slow_step"
TOML
# The load: `stress-ng --cpu 2` throughout, or with LOAD=bursty on and off in turns of
# 1-4 s each (builds starting and ending on a shared machine).
load_machine() {
  if [ "${LOAD:-steady}" != bursty ]; then exec stress-ng --cpu 2 --timeout "$((SECS + 10))s" >/dev/null 2>&1; fi
  trap 'kill $s 2>/dev/null; exit 0' TERM
  while :; do
    stress-ng --cpu 2 --timeout "$((RANDOM % 4 + 1))s" >/dev/null 2>&1 &
    s=$!
    wait $s
    sleep "$((RANDOM % 4 + 1))" & s=$!
    wait $s
  done
}
printf '%-28s %-6s %6s %12s %8s %10s %10s\n' eacgm loop secs flagged entries intervals max_ratio
for call in ${LOOPS:-malloc sync sleep}; do
  i=0
  for eacgm in "$@"; do
    i=$((i + 1))
    load_machine &
    load=$!
    sleep 1
    # The loop outlasts the run: --duration ends the trace, then the loop is stopped.
    if [ "$call" = sleep ]; then
      loop=(--config "$TMP/eacgm.toml" -- "$BUILD/slow_calls" 100000000 500 500 0 0 0)
    else
      loop=(-- "$BUILD/cuda_loop" --call "$call" --iters 100000000000)
    fi
    "$eacgm" run --json --no-gpu --duration "$SECS" "${loop[@]}" \
      >"$TMP/$i-$call.json" 2>"$TMP/$i-$call.err" || true
    kill "$load" 2>/dev/null || true
    wait "$load" 2>/dev/null || true
    python3 - "$TMP/$i-$call.json" "$eacgm" "$call" "$SECS" <<'PY'
import json, sys
path, eacgm, call, secs = sys.argv[1:]
a = json.load(open(path))["anomalies"]
ratios = [v["ratio"] for v in a["intervals"]]
print(f"{eacgm[-28:]:<28} {call:<6} {secs:>6} {a['total']:>12} {len(a['calls']):>8} "
      f"{a['interval_total']:>10} {max(ratios) if ratios else 0:>10.2f}")
PY
  done
done
