#!/usr/bin/env bash
# Device check for one layer per operation: on a GPU machine libcuda is attached at start,
# so the default mode of `eacgm run` counts cuda_loop's cudaStreamSynchronize(0) calls once,
# at the driver's cuStreamSynchronize, and none at the runtime; per call sees both layers
# (the driver's call nested). The start-up notice says the runtime's operations are
# counted at the driver, and no switch is announced later (it happened at start).
# Prints a table and PASS/FAIL per check.
#
# Usage: tests/gpu/one_layer_check.sh BIN_DIR [WORK_DIR]
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver.
set -uo pipefail

BIN="$(cd "${1:?usage: one_layer_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-one-layer.XXXXXX)}"
ITERS=${ITERS:-5000}
mkdir -p "$WORK"
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"
[ -x "$BIN/cuda_loop" ] || skip "$BIN/cuda_loop not found"

"$BIN/eacgm" run --json --no-gpu -- "$BIN/cuda_loop" --call sync --iters "$ITERS" \
  >"$WORK/always_on.json" 2>"$WORK/always_on.err"
echo "always-on exit: $?" >>"$WORK/always_on.err"
"$BIN/eacgm" run --json --no-gpu --mode per-call -- "$BIN/cuda_loop" --call sync --iters "$ITERS" \
  >"$WORK/per_call.json" 2>"$WORK/per_call.err"
echo "per-call exit: $?" >>"$WORK/per_call.err"

python3 - "$WORK" "$ITERS" <<'PY'
import json, sys
work, iters = sys.argv[1], int(sys.argv[2])
def calls(name):
    out = {}
    for f in json.load(open(f"{work}/{name}.json"))["functions"]:
        out[f["function"]] = out.get(f["function"], 0) + f["calls"]
    return out
a, p = calls("always_on"), calls("per_call")
err = open(f"{work}/always_on.err").read()
checks = [
    ("always-on: cudaStreamSynchronize not counted at the runtime", a.get("cudaStreamSynchronize", 0) == 0,
     a.get("cudaStreamSynchronize", 0)),
    ("always-on: cuStreamSynchronize counted at the driver", a.get("cuStreamSynchronize", 0) >= iters,
     a.get("cuStreamSynchronize", 0)),
    ("per-call: cudaStreamSynchronize at the runtime", p.get("cudaStreamSynchronize", 0) == iters,
     p.get("cudaStreamSynchronize", 0)),
    ("notice: the runtime's operations counted at the driver",
     "are counted at the driver's probes of the same operations" in err, ""),
    ("no switch after start (libcuda attached at start)", "detached from" not in err, ""),
]
failed = 0
for what, ok, value in checks:
    print(f"{'PASS' if ok else 'FAIL'}  {what:<62} {value}")
    failed += not ok
print("FAIL" if failed else "PASS")
sys.exit(1 if failed else 0)
PY
