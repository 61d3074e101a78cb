#!/usr/bin/env bash
# Anomaly detection, evaluated end to end (root, real eBPF): build/slow_calls calls
# slow_step() in a user library traced by a [[probe]]; each call sleeps ~500 us times a
# log-normal jitter (sigma 0.3). Planted: single slow calls (every 50th from call 300,
# FACTOR x 500 us) and slow stretches (2,500 calls in a row at FACTOR x). `eacgm run
# --json` reports anomalies; this script prints per scenario the planted and flagged
# counts, precision and recall (calls), and for stretches whether a slow interval
# overlapped the stretch and how many flagged intervals did not. Flagged calls of one
# function in a row are one entry with `repeats` (the report keeps only the first call's
# arguments): an entry's repeats count as planted when its first call was planted.
# Usage: bench/anomaly_eval.sh [BUILD_DIR]   (default build)
set -euo pipefail
BUILD=$(readlink -f "${1:-build}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/eacgm.toml" <<'TOML'
[[probe]]
name = "slow_step"
domain = "user"
library = "libeacgm_slow.so*"
symbol = "slow_step"
args = [
  { name = "index", reg = 0, kind = "raw", format = "signed" },
  { name = "planted", reg = 1, kind = "raw", format = "signed" },
]
TOML

run() {  # NAME ARGS...: one traced run, report written to $WORK/NAME.{json,out}
  local name=$1; shift
  "$BUILD/eacgm" run --json --no-gpu --config "$WORK/eacgm.toml" -- "$BUILD/slow_calls" "$@" \
    > "$WORK/$name.json" 2> "$WORK/$name.out"
}

run clean 6000 500 500 0 0 0.3
for f in 3 5 10 20 100; do run "call_x$f" 3000 500 $((f * 500)) 50 300 0.3; done
for f in 1.5 2 3; do run "stretch_x$f" 6000 500 "$(python3 -c "print(int($f * 500))")" 100000 1500 0.3 2500; done

python3 - "$WORK" <<'PY'
import json, re, sys, os
work = sys.argv[1]
def load(name):
    doc = json.load(open(f"{work}/{name}.json"))
    out = open(f"{work}/{name}.out").read()
    planted = {int(m) for m in re.findall(r"(?m)^planted (\d+)", out)}
    span = [int(x) for x in re.findall(r"(?m)^stretch_(?:start|end) (\d+)", out)]
    return doc["anomalies"], planted, span
print(f"{'scenario':<14}{'planted':>8}{'flagged':>8}{'true':>6}{'precision':>10}{'recall':>8}{'intervals':>10}{'in stretch':>11}{'outside':>8}")
for name in sorted(os.listdir(work)):
    if not name.endswith(".json"): continue
    name = name[:-5]
    a, planted, span = load(name)
    # Slow calls of one function in a row are one entry (its first call's arguments, and
    # `repeats`): an entry's repeats count as planted when its first call was.
    flagged = sum(c.get("repeats", 1) for c in a["calls"])
    true = sum(c.get("repeats", 1) for c in a["calls"] if c["args"].get("index") in planted)
    prec = f"{true / flagged:.2f}" if flagged else "-"
    rec = f"{true / len(planted):.2f}" if planted and not span else "-"
    inside = outside = 0
    for v in a["intervals"]:
        if span and v["start_ns"] < span[1] and v["end_ns"] > span[0]: inside += 1
        else: outside += 1
    print(f"{name:<14}{len(planted):>8}{a['total']:>8}{true:>6}{prec:>10}{rec:>8}"
          f"{a['interval_total']:>10}{inside if span else '-':>11}{outside:>8}")
PY
