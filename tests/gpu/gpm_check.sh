#!/usr/bin/env bash
# Device check for GPM's profiling counters: while tests/gpu/gpm_loads.py runs idle, a bf16
# GEMM loop, a DRAM-bound copy loop and a pinned host-to-device copy loop on GPU 0,
# `eacgm gpu --json --watch` samples every 0.5 s; each phase's mean SM, tensor and DRAM
# activity and PCIe RX are checked against what the loads measured themselves, with NVML
# utilization beside them. Then the CPU cost of a sampling pass with and without GPM, and
# /metrics of `eacgm serve` carrying DCGM_FI_PROF_*, and no health event on the idle GPUs
# (/api/v1/gpu_events).
# Usage: tests/gpu/gpm_check.sh CARRY_DIR [WORK_DIR]   (exit 0 all pass, 1 a FAIL, 77 skip)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/check_common.sh"
BIN="$(cd "${1:?usage: gpm_check.sh CARRY_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-gpm.XXXXXX)}"
mkdir -p "$WORK"
carry_libs "$BIN"
need_torch_gpu
PHASE_S=${GPM_PHASE_S:-8}

"$BIN/eacgm" gpu --json --watch --interval 0.5 >"$WORK/gpu.jsonl" 2>"$WORK/gpu.err" &
WATCH=$!
sleep 1
"$PY" "$HERE/gpm_loads.py" "$PHASE_S" >"$WORK/loads.jsonl" 2>"$WORK/loads.err"
LOADS_RC=$?
sleep 1
kill -INT $WATCH; wait $WATCH

# The pass's CPU cost, with GPM and with [gpu] profiling = false.
printf '[gpu]\nprofiling = false\n' >"$WORK/off.toml"
"$BIN/eacgm" gpu --json --watch --interval 0.2 --count 25 >"$WORK/cost_on.jsonl" 2>/dev/null
"$BIN/eacgm" gpu --config "$WORK/off.toml" --json --watch --interval 0.2 --count 25 >"$WORK/cost_off.jsonl" 2>/dev/null

PORT=$((20000 + RANDOM % 20000))
"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" 2>"$WORK/serve.err" &
SERVE=$!
sleep 6
curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt"
curl -s "http://127.0.0.1:$PORT/api/v1/gpu_events" >"$WORK/gpu_events.json"
kill -TERM $SERVE; wait $SERVE

"$PY" - "$WORK" "$LOADS_RC" <<'PY'
import datetime, json, sys
work, loads_rc = sys.argv[1], int(sys.argv[2])
fails = 0
def check(name, ok, detail):
    global fails
    print(f"{'PASS' if ok else 'FAIL'}: {name}: {detail}")
    fails += 0 if ok else 1

def ts(iso):
    return datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()

samples = [json.loads(l) for l in open(f"{work}/gpu.jsonl") if l.startswith("{")]
loads = [json.loads(l) for l in open(f"{work}/loads.jsonl") if l.startswith("{")]
check("loads ran", loads_rc == 0 and len(loads) == 5, f"rc {loads_rc}, {len(loads)} lines")
peak = next((l["peak_dram_bytes_per_second"] for l in loads if "peak_dram_bytes_per_second" in l), None)
g0 = [s["gpus"][0] for s in samples if s.get("gpus")]
check("GPU 0 has GPM", bool(g0) and g0[0]["gpm_supported"], g0[0]["name"] if g0 else "no samples")
rows = {}
for ph in (l for l in loads if "phase" in l):
    # A pass at time T covers the 0.5 s before it: keep the passes well inside the phase.
    inside = [s["gpus"][0] for s in samples
              if ph["start"] + 1.5 <= ts(s["time"]) - 0.5 and ts(s["time"]) <= ph["end"] - 0.2
              and s["gpus"] and s["gpus"][0]["gpm"]]
    def mean(key, src="gpm"):
        vals = [(g[src] if src else g)[key] for g in inside if (g[src] if src else g)[key] is not None]
        return sum(vals) / len(vals) if vals else float("nan")
    rows[ph["phase"]] = dict(n=len(inside), util=mean("utilization_gpu_percent", None) / 100,
                             sm=mean("sm_active"), tensor=mean("tensor_active"), dram=mean("dram_active"),
                             pcie_rx=mean("pcie_rx_bytes_per_second"), pcie_tx=mean("pcie_tx_bytes_per_second"),
                             measured=ph.get("measured_bytes_per_second"))
print("| phase | passes | NVML util | SM active | tensor active | DRAM active | PCIe RX GB/s | measured GB/s |")
print("|---|---|---|---|---|---|---|---|")
for name, r in rows.items():
    m = r["measured"] / 1e9 if r["measured"] else float("nan")
    print(f"| {name} | {r['n']} | {r['util']:.2f} | {r['sm']:.3f} | {r['tensor']:.3f} | {r['dram']:.3f} | "
          f"{r['pcie_rx'] / 1e9:.2f} | {m:.2f} |")
i, g, d, p = rows.get("idle"), rows.get("gemm"), rows.get("dram"), rows.get("pcie_h2d")
if i:
    check("idle: every activity below 0.02", max(i["sm"], i["tensor"], i["dram"]) < 0.02, i)
if g:
    check("GEMM: SM and tensor activity >= 0.8, DRAM below 0.3",
          g["sm"] >= 0.8 and g["tensor"] >= 0.8 and g["dram"] < 0.3, g)
if d and peak:
    want = d["measured"] / peak
    check("copy loop: DRAM activity within 10 points of measured/peak",
          abs(d["dram"] - want) <= 0.10, f"GPM {d['dram']:.3f}, measured {d['measured']/1e9:.0f} GB/s over "
          f"peak {peak/1e9:.0f} GB/s = {want:.3f}")
    check("copy loop: tensor below 0.02", d["tensor"] < 0.02, d["tensor"])
if p:
    check("H2D copies: PCIe RX within 10% of measured", abs(p["pcie_rx"] - p["measured"]) <= 0.10 * p["measured"],
          f"GPM {p['pcie_rx']/1e9:.2f} GB/s, measured {p['measured']/1e9:.2f} GB/s")

def cost(path):
    v = [json.loads(l)["pass_cpu_seconds"] for l in open(path) if l.startswith("{")][1:]
    return sum(v) / len(v) * 1e3 if v else float("nan"), len(v)
on, off = cost(f"{work}/cost_on.jsonl"), cost(f"{work}/cost_off.jsonl")
print(f"| pass CPU ms, GPM on | {on[0]:.3f} ({on[1]} passes) | GPM off | {off[0]:.3f} ({off[1]} passes) |")
off_lines = [json.loads(l) for l in open(f"{work}/cost_off.jsonl") if l.startswith("{")]
check("[gpu] profiling = false: no GPM", bool(off_lines) and all(g["gpm"] is None for s in off_lines for g in s["gpus"]),
      f"{len(off_lines)} passes")
metrics = open(f"{work}/metrics.txt").read()
names = ["DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
         "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_DEV_GPU_UTIL"]
check("serve /metrics has the profiling fields", all(f"\n{n}{{" in metrics for n in names),
      [n for n in names if f"\n{n}{{" not in metrics])
try:
    events = json.load(open(f"{work}/gpu_events.json"))["events"]
except (OSError, ValueError, KeyError) as e:
    events = [f"unreadable: {e}"]
check("idle GPUs: no health events", events == [], events[:5])
sys.exit(1 if fails else 0)
PY
