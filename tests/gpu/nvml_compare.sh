#!/usr/bin/env bash
# Device check for `eacgm gpu`: while a small PyTorch job runs, compares eacgm's device and
# process samples with nvidia-smi and measures the CPU cost of one sampling pass.
#
# Usage: tests/gpu/nvml_compare.sh [BUILD_DIR]   (default: build; needs BUILD_DIR/eacgm)
# Needs: an NVIDIA GPU and driver, nvidia-smi, /opt/torch/.venv/bin/python. No network.
# Exit status: 0 when every exact check (memory, identity, process list) agrees, 1 if
# one does not, 77 when the machine cannot run the check (no GPU/driver/PyTorch).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
EACGM="$BUILD/eacgm"
BENCH="$BUILD/bench/eacgm_bench_sample"
TORCH_PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"

skip() { echo "SKIP: $*" >&2; exit 77; }
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found (no NVIDIA driver)"
[[ -x "$EACGM" ]] || skip "$EACGM not built (cmake --build $BUILD --target eacgm)"
[[ -x "$TORCH_PY" ]] || skip "$TORCH_PY not found (PyTorch environment)"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"

WORK="$(mktemp -d /tmp/eacgm-nvml-compare.XXXXXX)"
JOB_PID=""
cleanup() {
  if [[ -n "$JOB_PID" ]]; then kill "$JOB_PID" 2>/dev/null || true; wait "$JOB_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The load: holds a fixed 2 GiB allocation on GPU 0 and keeps the SMs busy with matmuls,
# so memory is steady (exact comparison) and utilization is high (noisy comparison).
cat >"$WORK/job.py" <<'PY'
import os, sys, time, torch
ready, seconds = sys.argv[1], float(sys.argv[2])
dev = torch.device("cuda:0")
hold = torch.empty(2 * 1024**3, dtype=torch.uint8, device=dev)
a = torch.randn(4096, 4096, device=dev)
b = torch.randn(4096, 4096, device=dev)
for _ in range(3):
    c = a @ b
torch.cuda.synchronize()
with open(ready, "w") as f:
    f.write(str(os.getpid()))
end = time.time() + seconds
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
PY

"$TORCH_PY" "$WORK/job.py" "$WORK/ready" 60 >"$WORK/job.log" 2>&1 &
JOB_PID=$!
for _ in $(seq 1 300); do
  [[ -s "$WORK/ready" ]] && break
  kill -0 "$JOB_PID" 2>/dev/null || { cat "$WORK/job.log" >&2; echo "FAIL: the PyTorch job exited early" >&2; exit 1; }
  sleep 0.2
done
[[ -s "$WORK/ready" ]] || { echo "FAIL: the PyTorch job did not start within 60 s" >&2; exit 1; }
sleep 2  # let utilization settle into the steady state

GPU_FIELDS="index,uuid,name,pci.bus_id,driver_version,memory.total,memory.used,memory.free,memory.reserved,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem,fan.speed,clocks_event_reasons.active"
APP_FIELDS="pid,gpu_uuid,process_name,used_memory"

# Bracket eacgm between two nvidia-smi reads: a value that moved in between shows up as
# a difference between the two reads rather than as a disagreement.
nvidia-smi --query-gpu="$GPU_FIELDS" --format=csv,noheader,nounits >"$WORK/smi_gpu_before.csv"
nvidia-smi --query-compute-apps="$APP_FIELDS" --format=csv,noheader,nounits >"$WORK/smi_apps_before.csv"
"$EACGM" gpu --json --processes >"$WORK/eacgm.json"
nvidia-smi --query-gpu="$GPU_FIELDS" --format=csv,noheader,nounits >"$WORK/smi_gpu_after.csv"
nvidia-smi --query-compute-apps="$APP_FIELDS" --format=csv,noheader,nounits >"$WORK/smi_apps_after.csv"
nvidia-smi pmon -c 1 -s u >"$WORK/pmon.txt" 2>&1 || true

# CPU cost of a pass: eacgm's own per-pass thread CPU time over 20 passes, plus the
# whole process's CPU (start-up and NVML init included) for the same run.
"$EACGM" gpu --json --processes --count 20 --interval 0.1 >"$WORK/watch.jsonl"
if [[ -x "$BENCH" ]]; then
  EACGM_BENCH_REAL_NVML=1 "$BENCH" --benchmark_min_time=2 --benchmark_format=json >"$WORK/bench.json" 2>/dev/null || true
fi

"$TORCH_PY" - "$WORK" "$(cat "$WORK/ready")" <<'PY'
import csv, json, math, os, statistics, sys

work, job_pid = sys.argv[1], int(sys.argv[2])
MiB = 1024 * 1024
rows, hard_fail = [], False

def read_csv(name):
    with open(os.path.join(work, name)) as f:
        return [[c.strip() for c in r] for r in csv.reader(f) if r]

def num(s):
    try:
        return float(s)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"

def check(what, ours, before, after, kind, tol=0.0):
    """kind: 'exact' (must equal one of the two nvidia-smi reads) or 'near' (within tol)."""
    global hard_fail
    if ours is None and before is None:
        ok = True
    elif ours is None or before is None:
        ok = False
    elif kind == "exact":
        ok = ours == before or ours == after
    elif kind == "MiB":
        # eacgm has bytes, nvidia-smi rounds to MiB: agree when nvidia-smi's figure is
        # our exact value rounded either way.
        ok = any(v is not None and math.floor(ours) <= v <= math.ceil(ours) for v in (before, after))
        ours = round(ours, 2)
    else:
        lo = min(before, after if after is not None else before) - tol
        hi = max(before, after if after is not None else before) + tol
        ok = lo <= ours <= hi
    if not ok and kind in ("exact", "MiB"):
        hard_fail = True
    rows.append((what, "-" if ours is None else ours, "-" if before is None else before,
                 "-" if after is None else after, kind if kind in ("exact", "MiB") else f"±{tol:g}",
                 "ok" if ok else ("FAIL" if kind in ("exact", "MiB") else "differs")))

snap = json.load(open(os.path.join(work, "eacgm.json")))
gb, ga = read_csv("smi_gpu_before.csv"), read_csv("smi_gpu_after.csv")
check("GPU count", len(snap["gpus"]), len(gb), len(ga), "exact")
for g in snap["gpus"]:
    i = g["index"]
    b, a = gb[i], ga[i]
    p = f"gpu{i} "
    check(p + "uuid", g["uuid"], b[1], a[1], "exact")
    check(p + "name", g["name"], b[2], a[2], "exact")
    check(p + "pci.bus_id", g["pci_bus_id"], b[3], a[3], "exact")
    check(p + "driver_version", snap["driver_version"], b[4], a[4], "exact")
    mib = lambda v: None if v is None else v / MiB
    check(p + "memory.total MiB", mib(g["memory_total_bytes"]), num(b[5]), num(a[5]), "MiB")
    check(p + "memory.used MiB", mib(g["memory_used_bytes"]), num(b[6]), num(a[6]), "MiB")
    check(p + "memory.free MiB", mib(g["memory_free_bytes"]), num(b[7]), num(a[7]), "MiB")
    check(p + "memory.reserved MiB", mib(g["memory_reserved_bytes"]), num(b[8]), num(a[8]), "MiB")
    check(p + "utilization.gpu %", g["utilization_gpu_percent"], num(b[9]), num(a[9]), "near", 10)
    check(p + "utilization.memory %", g["utilization_memory_percent"], num(b[10]), num(a[10]), "near", 10)
    check(p + "temperature.gpu C", g["temperature_gpu_celsius"], num(b[11]), num(a[11]), "near", 3)
    w = lambda mw: None if mw is None else round(mw / 1000.0, 2)
    check(p + "power.draw W", w(g["power_usage_milliwatts"]), num(b[12]), num(a[12]), "near", 30)
    check(p + "power.limit W", w(g["power_limit_milliwatts"]), num(b[13]), num(a[13]), "near", 0.01)
    check(p + "clocks.sm MHz", g["clock_sm_mhz"], num(b[14]), num(a[14]), "near", 100)
    check(p + "clocks.mem MHz", g["clock_memory_mhz"], num(b[15]), num(a[15]), "near", 0)
    check(p + "fan.speed %", g["fan_speed_percent"], num(b[16]), num(a[16]), "near", 5)
    reasons = g["clock_event_reasons"]
    rb = int(b[17], 16) if b[17].startswith("0x") else None
    ra = int(a[17], 16) if a[17].startswith("0x") else None
    rows.append((p + "clocks_event_reasons", "-" if reasons is None else hex(reasons),
                 "-" if rb is None else hex(rb), "-" if ra is None else hex(ra), "info", "-"))

# Processes: the same (pid, GPU) set, and the same memory to the MiB.
uuid_to_index = {g["uuid"]: g["index"] for g in snap["gpus"]}
ours = {(p["pid"], p["gpu_uuid"]): p for p in snap["processes"] if "C" in p["type"]}
smi_b = {(int(r[0]), r[1]): r for r in read_csv("smi_apps_before.csv")}
smi_a = {(int(r[0]), r[1]): r for r in read_csv("smi_apps_after.csv")}
check("compute processes (pid, GPU)", len(ours), len(smi_b), len(smi_a), "exact")
for key in sorted(set(smi_b) | set(ours)):
    pid, uuid = key
    p = ours.get(key)
    used = None if p is None or p["used_memory_bytes"] is None else p["used_memory_bytes"] / MiB
    check(f"pid {pid} gpu{uuid_to_index.get(uuid, '?')} used_memory MiB", used,
          num(smi_b[key][3]) if key in smi_b else None, num(smi_a[key][3]) if key in smi_a else None, "MiB")
nvml_pids = {pid for pid, _ in ours}
rows.append(("torch job pid seen by NVML", job_pid in nvml_pids, "-", "-", "info",
             "ok" if job_pid in nvml_pids else "other pid namespace?"))

# Per-process SM utilization against nvidia-smi pmon (both are samples of a noisy value).
pmon = {}
for line in open(os.path.join(work, "pmon.txt")):
    f = line.split()
    if len(f) >= 5 and not line.startswith("#") and f[1].isdigit():
        pmon[(int(f[0]), int(f[1]))] = num(f[3])
for p in snap["processes"]:
    k = (p["gpu"], p["pid"])
    if k in pmon:
        check(f"pid {p['pid']} gpu{p['gpu']} sm %", p["sm_utilization_percent"], pmon[k], pmon[k], "near", 15)

# CPU cost of one pass.
passes = [json.loads(l) for l in open(os.path.join(work, "watch.jsonl")) if l.strip()]
cpu_us = sorted(s["pass_cpu_seconds"] * 1e6 for s in passes[1:])  # pass 0 warms NVML up
if cpu_us:
    med, worst = statistics.median(cpu_us), cpu_us[-1]
    rows.append(("pass CPU µs (median, eacgm gpu --processes)", f"{med:.0f}", "-", "-", "≤ 5000",
                 "ok" if med <= 5000 else "over budget"))
    rows.append(("pass CPU µs (max of 19)", f"{worst:.0f}", "-", "-", "info", "-"))
bench = os.path.join(work, "bench.json")
if os.path.exists(bench) and os.path.getsize(bench) > 0:
    try:
        for b in json.load(open(bench))["benchmarks"]:
            rows.append((f"bench {b['name']} CPU µs/pass", f"{b.get('cpu_us_per_pass', b['cpu_time']):.0f}",
                         "-", "-", "≤ 5000", "ok" if b.get("cpu_us_per_pass", b["cpu_time"]) <= 5000 else "over budget"))
    except (ValueError, KeyError):
        pass

w = [max(len(str(r[i])) for r in rows + [("check", "eacgm", "smi before", "smi after", "tolerance", "result")])
     for i in range(6)]
header = ("check", "eacgm", "smi before", "smi after", "tolerance", "result")
for r in [header] + rows:
    print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip())
print()
print("RESULT:", "FAIL (an exact check disagrees)" if hard_fail else "PASS (exact checks agree)")
sys.exit(1 if hard_fail else 0)
PY
