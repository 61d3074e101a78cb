#!/usr/bin/env bash
# Device check for the on-demand capture: `eacgm serve` (always-on) traces a PyTorch
# training loop that logs each step's time (CLOCK_MONOTONIC); `eacgm capture` takes 5 s of
# it. Compares the step time before, during and after the capture (the capture's cost
# on the loop is the per-call rate inside the window and nothing outside it), and
# validates the capture file: only the trainer's calls, launches with kernel names,
# slices nested per thread, GPU counters, inside the window. Prints a table and
# PASS/FAIL per check.
#
# Usage: tests/gpu/capture_check.sh BIN_DIR [WORK_DIR]
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: capture_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-capture.XXXXXX)}"
PORT=${PORT:-9979}
mkdir -p "$WORK"
carry_libs "$BIN"
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
need_torch_gpu

cat >"$WORK/train.py" <<'PY'
import sys, time, torch
seconds, log = float(sys.argv[1]), sys.argv[2]
dev = torch.device("cuda")
model = torch.nn.TransformerEncoder(
    torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True),
    num_layers=2).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(16, 64, 256, device=dev)
steps = []
end = time.monotonic() + seconds
while time.monotonic() < end:
    t0 = time.monotonic_ns()
    opt.zero_grad(set_to_none=True)
    model(x).pow(2).mean().backward()
    opt.step()
    torch.cuda.synchronize()
    steps.append((t0, time.monotonic_ns()))
with open(log, "w") as f:
    for a, b in steps:
        f.write(f"{a} {b}\n")
print("steps", len(steps), flush=True)
PY
scrape() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" --store off 2>"$WORK/serve.err" &
SERVE=$!
for _ in $(seq 150); do scrape /readyz >/dev/null 2>&1 && break; sleep 0.2; done
"$PY" "$WORK/train.py" 40 "$WORK/steps.log" >"$WORK/train.out" 2>&1 &
TRAIN=$!
sleep 22  # start-up (PyTorch and CUDA take ~10 s), warm-up, libraries attached; then steps before the capture
"$BIN/eacgm" capture --server "http://127.0.0.1:$PORT" --pid $TRAIN --seconds 5 -o "$WORK/capture.json" \
  2>"$WORK/capture.err"
echo "capture exit: $?" >>"$WORK/capture.err"
wait $TRAIN
kill -TERM $SERVE; wait $SERVE

"$PY" - "$WORK" "$TRAIN" <<'PY'
import json, statistics, sys
work, pid = sys.argv[1], int(sys.argv[2])
err = open(f"{work}/capture.err").read()
try:
    doc = json.load(open(f"{work}/capture.json"))
except Exception as e:
    print(f"capture file unreadable: {e}\n{err}")
    sys.exit(1)
cap = doc["eacgm_capture"]
b, e, off = cap["begin_ns"], cap["end_ns"], cap["wall_offset_ns"]
steps = [tuple(map(int, l.split())) for l in open(f"{work}/steps.log")]
before = [t1 - t0 for t0, t1 in steps if t1 < b - 1e9 and t0 > b - 6e9]
during = [t1 - t0 for t0, t1 in steps if t0 >= b and t1 <= e]
after = [t1 - t0 for t0, t1 in steps if t0 > e + 1e9]
med = lambda v: statistics.median(v) / 1e6 if v else float("nan")
calls = [x for x in doc["traceEvents"] if x.get("ph") == "X"]
launches = [x for x in calls if "LaunchKernel" in x["name"]]
named = [x for x in launches if "kernel" in x["args"] or "kernel" in json.dumps(x["args"])]
others = [x for x in calls if x["pid"] != pid]
inside = [x for x in calls if b - 1e6 <= x["ts"] * 1000 - off <= e + 1e6]
bad_nesting = 0
by_tid = {}
for x in calls:
    by_tid.setdefault(x["tid"], []).append((x["ts"], x["ts"] + x["dur"]))
for lst in by_tid.values():
    lst.sort()
    stack = []
    for s, t in lst:
        while stack and stack[-1] <= s:
            stack.pop()
        if stack and t > stack[-1] + 1e-3:
            bad_nesting += 1
        stack.append(t)
counters = [x for x in doc["traceEvents"] if x.get("ph") == "C"]
print(f"step time (median ms): before {med(before):.3f}, during {med(during):.3f}, after {med(after):.3f}")
checks = [
    ("eacgm capture wrote the file", err.strip().splitlines()[-1] if err.strip() else "", "capture exit: 0" in err),
    ("calls in the capture", len(calls), len(calls) > 1000),
    ("kernel launches, most named", f"{len(named)}/{len(launches)}", launches and len(named) > 0.9 * len(launches)),
    ("only the trainer's calls", len(others), not others),
    ("calls inside the window", f"{len(inside)}/{len(calls)}", len(inside) == len(calls)),
    ("slices nested per thread", bad_nesting, bad_nesting == 0),
    ("GPU counters", len(counters), len(counters) > 0),
    ("not truncated, drained", f"{cap['truncated']} {cap['drained']}", not cap["truncated"] and cap["drained"]),
    ("steps before/during/after", f"{len(before)}/{len(during)}/{len(after)}", min(len(before), len(during), len(after)) >= 5),
    ("step time after within 5% of before", f"{med(after)/med(before):.3f}" if before and after else "",
     before and after and med(after) <= 1.05 * med(before)),
]
failed = 0
print(f"{'check':<40} {'value':<40} result")
for name, value, ok in checks:
    failed += not ok
    print(f"{name:<40} {str(value)[:40]:<40} {'PASS' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)
PY
