#!/usr/bin/env bash
# The capture's cost on a traced loop: `eacgm serve` (always-on, cuda_driver probes, the
# duty cycle off) traces capture_calls, a tight loop of cuLaunchKernel and
# cuStreamSynchronize on the stub libcuda that logs each call's own time (CLOCK_MONOTONIC
# before and after); a 2 s capture is taken in the middle. Prints the mean time per call
# before the capture, inside its window and after it (ns), for each function.
# Usage: bench/capture_cost.sh [BUILD_DIR] [PORT]
set -euo pipefail
B=${1:-build}
PORT=${2:-19981}
. "$(dirname "$0")/common.sh"
printf '[trace]\nduty_cycle = false\n' >"$TMP/eacgm.toml"
"$B/eacgm" serve --listen "127.0.0.1:$PORT" --probes cuda_driver --no-gpu --store off --config "$TMP/eacgm.toml" \
  2>"$TMP/serve.err" &
SERVE=$!
trap 'kill -TERM $SERVE 2>/dev/null; wait $SERVE 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
"$B/capture_calls" --seconds 8 --sleep-us 0 --log "$TMP/calls.log" --wait-file "$TMP/go" >"$TMP/loop.out" &
LOOP=$!
sleep 2  # the stub libcuda attached
touch "$TMP/go"
sleep 3
"$B/eacgm" capture --server "http://127.0.0.1:$PORT" --pid $LOOP --seconds 2 -o "$TMP/capture.json" 2>"$TMP/capture.err"
wait $LOOP
python3 - "$TMP/capture.json" "$TMP/calls.log" <<'PY'
import json, sys
cap = json.load(open(sys.argv[1]))["eacgm_capture"]
phases = {"before": [], "inside": [], "after": []}
sums = {}
for line in open(sys.argv[2]):
    f, a, b = line.split()
    a, b = int(a), int(b)
    phase = "before" if b < cap["begin_ns"] else "after" if a > cap["end_ns"] else "inside" if a >= cap["armed_ns"] and b <= cap["disarming_ns"] else None
    if phase:
        s = sums.setdefault((f, phase), [0, 0])
        s[0] += b - a
        s[1] += 1
print(f"{'function':<22} {'before ns':>10} {'inside ns':>10} {'after ns':>10}  calls inside (captured {cap['calls']})")
for f in sorted({k[0] for k in sums}):
    row = [sums.get((f, p), [0, 1]) for p in ("before", "inside", "after")]
    print(f"{f:<22} {row[0][0]/row[0][1]:>10.0f} {row[1][0]/row[1][1]:>10.0f} {row[2][0]/row[2][1]:>10.0f}  {row[1][1]}")
PY
