#!/usr/bin/env bash
# Device check of the private driver under `eacgm serve` (always-on, the default
# configuration, store off): two launch-bound loops (bench/gpu/train_step.py --size cpu)
# run side by side, both carrying the hook and counting (EACGM_GPU_TIME=1); A runs its own
# copy of libcuda (EACGM_PRIVATE_DRIVER), B the usual one. Checks: A's driver functions
# are only those its hook wraps (no uprobe reached the copy) and no runtime launch, copy
# or memset is counted for A (nothing of the agent traps its launches); its hook's driver
# launches are as many as its hook counted per kernel; B's driver launches are counted; A's
# ring says private_driver; the hook counted the same launches in both; A's host waits
# (which only its hook times: the runtime's synchronisations are not probed in always-on
# mode while the driver's are) are as many as B's, and priced; A's memory ledger (its
# driver allocations sent one by one by its hook) is B's. Prints whether the loader cache lists libcuda (where it does
# not, the runtime's stand-ins count until a libcuda is seen) and both loops' step times.
# Usage: tests/gpu/private_driver_serve_check.sh BIN_DIR [WORK_DIR]
# Exit status: 0 all pass, 1 a failure, 77 no GPU/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"
BIN=$(readlink -f "${1:?usage: private_driver_serve_check.sh BIN_DIR [WORK_DIR]}")
WORK=${2:-$(mktemp -d /tmp/eacgm-private-serve.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${PORT:-9979}
STEPS=${STEPS:-4000}
mkdir -p "$WORK"
carry_libs "$BIN"
need_torch_gpu
echo "loader cache: $(ldconfig -p 2>/dev/null | grep -c 'libcuda\.so') libcuda entries"
printf '[store]\nurl = "off"\n' >"$WORK/eacgm.toml"
"$BIN/eacgm" serve --config "$WORK/eacgm.toml" --listen "127.0.0.1:$PORT" 2>"$WORK/serve.err" &
SERVE=$!
get() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
for _ in $(seq 100); do get /readyz >/dev/null 2>&1 && break; sleep 0.2; done
STEP="$HERE/../../bench/gpu/train_step.py"
env LD_PRELOAD="$BIN/libeacgm_hook.so" EACGM_GPU_TIME=1 EACGM_PRIVATE_DRIVER="$WORK/driver" \
  "$PY" "$STEP" --size cpu --steps "$STEPS" >"$WORK/a.out" 2>"$WORK/a.err" &
A=$!
env LD_PRELOAD="$BIN/libeacgm_hook.so" EACGM_GPU_TIME=1 \
  "$PY" "$STEP" --size cpu --steps "$STEPS" >"$WORK/b.out" 2>"$WORK/b.err" &
B=$!
# While both run: their functions, once B's page shows its launches (the page is
# refreshed every 5 s, and counts read from the kernel every few seconds), and a refresh
# later, so that A's page is as recent.
for _ in $(seq 60); do
  get "/api/v1/process?pid=$B" 2>/dev/null | grep -q '"cuLaunchKernel' && break
  sleep 1
done
sleep 6
get "/api/v1/process?pid=$A" >"$WORK/a.process.json"
get "/api/v1/process?pid=$B" >"$WORK/b.process.json"
wait $A $B
sleep 2
get /api/v1/gpu_time >"$WORK/gpu_time.json"
# Their host waits once both are summaries (exited: a process's last waits are in then).
for _ in $(seq 30); do
  get "/api/v1/process?pid=$A" >"$WORK/a.end.json" 2>/dev/null
  get "/api/v1/process?pid=$B" >"$WORK/b.end.json" 2>/dev/null
  "$PY" -c 'import json, sys
sys.exit(0 if all((json.load(open(f)).get("waits") or {}).get("exited") for f in sys.argv[1:]) else 1)' \
    "$WORK/a.end.json" "$WORK/b.end.json" 2>/dev/null && break
  sleep 1
done
get /api/v1/memory >"$WORK/memory.json"
kill -INT $SERVE; wait $SERVE
echo "step times: A (own copy) $(cat "$WORK/a.out"); B (usual) $(cat "$WORK/b.out")"
grep -i "copy of the driver\|driver's probes attached" "$WORK/serve.err" | head -3
"$PY" - "$WORK" "$A" "$B" "$HERE/../.." <<'PY'
import json, re, sys
work, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pa, pb = json.load(open(f"{work}/a.process.json")), json.load(open(f"{work}/b.process.json"))
fa = {f["function"]: f["calls"] for f in pa["functions"]}
fb = {f["function"]: f["calls"] for f in pb["functions"]}
hooked = set(re.findall(r"EACGM_DRIVER\((\w+),", open(f"{sys.argv[4]}/src/govern/hookcore/hooked_functions.def").read()))
def waits(p):
    return {w["kind"]: (w["calls"], w["total_ns"] or 0) for w in ((p.get("waits") or {}).get("waits") or [])
            if w["kind"] in ("stream_sync", "event_sync", "device_sync", "blocking_copy")}
wa, wb = waits(json.load(open(f"{work}/a.end.json"))), waits(json.load(open(f"{work}/b.end.json")))
gt = {p["pid"]: p for p in json.load(open(f"{work}/gpu_time.json"))["processes"]}
def ledger(pid):
    rows = [r for r in json.load(open(f"{work}/memory.json"))["processes"] if r["pid"] == pid]
    return {k: sum(r[k] for r in rows) for k in ("allocations", "allocated_bytes", "frees", "unknown_frees")} | {
        "leaks": sum(r["leaks"]["count"] for r in rows), "leaked_bytes": sum(r["leaks"]["bytes"] for r in rows)}
la, lb = ledger(a), ledger(b)
work_re = re.compile(r"^cuda(LaunchKernel|Memcpy\w*Async|Memset\w*Async)")
a_driver = {k: v for k, v in fa.items() if k.startswith("cu") and not k.startswith("cuda")}
a_unhooked = {k: v for k, v in a_driver.items() if k not in hooked}
a_launch = sum(v for k, v in a_driver.items() if k.startswith("cuLaunch"))
a_runtime_work = {k: v for k, v in fa.items() if work_re.match(k)}
b_launch = sum(v for k, v in fb.items() if k.startswith("cuLaunch"))
print(f"A (own copy): {len(fa)} functions, top {sorted(fa.items(), key=lambda x: -x[1])[:4]}")
print(f"B (usual):    {len(fb)} functions, top {sorted(fb.items(), key=lambda x: -x[1])[:4]}")
rows = [
    ("A: driver functions no hook wraps (a uprobe's)", a_unhooked, not a_unhooked),
    ("A: driver calls its hook counted", sum(a_driver.values()), a_launch > 0),
    ("A: runtime launches, copies, memsets counted", sum(a_runtime_work.values()), not a_runtime_work),
    ("B: driver launches counted (estimates)", b_launch, b_launch > 0),
    ("A: private_driver in its ring", gt.get(a, {}).get("private_driver"), gt.get(a, {}).get("private_driver") is True),
    ("B: private_driver in its ring", gt.get(b, {}).get("private_driver"), gt.get(b, {}).get("private_driver") is False),
    ("hook launches A / B", f'{gt.get(a, {}).get("launches")} / {gt.get(b, {}).get("launches")}',
     gt.get(a, {}).get("launches") == gt.get(b, {}).get("launches") and gt.get(a, {}).get("launches", 0) > 0),
    ("memory ledger A / B", f"{la} / {lb}", la == lb and la["allocations"] > 0),
    ("host waits (calls, ns) A / B", f"{wa} / {wb}",
     bool(wa) and {k: c for k, (c, _) in wa.items()} == {k: c for k, (c, _) in wb.items()}
     and all(ns > 0 for _, ns in wa.values())),
]
ok = True
for name, value, good in rows:
    print(f"{'PASS' if good else 'FAIL'}: {name}: {value}")
    ok = ok and good
sys.exit(0 if ok else 1)
PY
