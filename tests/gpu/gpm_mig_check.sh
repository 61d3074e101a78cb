#!/usr/bin/env bash
# Device check for GPM per MIG GPU instance. On every GPU nvidia-smi lists: one
# `eacgm gpu --json` pass and `eacgm serve`'s /metrics. A GPU with MIG off must look as it
# did before MIG support (a `gpm` object where it has GPM, no `gpm_instances` key, no
# GPU_I_ID series). A GPU with MIG on must have no whole-GPU counters, one `gpm_instances`
# entry and one DCGM_FI_PROF_SM_ACTIVE series (GPU_I_PROFILE, GPU_I_ID) per GPU instance
# `nvidia-smi mig -lgi` lists, with its id and profile; then, with torch, a bf16 GEMM loop
# in the first MIG device makes its GPU instance's SM and tensor activity >= 0.5 while
# the other instances stay under 0.05. Prints a pass's CPU time. It changes no MIG setting.
# Usage: tests/gpu/gpm_mig_check.sh CARRY_DIR [WORK_DIR]   (exit 0 all pass, 1 a FAIL, 77 skip)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/check_common.sh"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"
BIN="$(cd "${1:?usage: gpm_mig_check.sh CARRY_DIR [WORK_DIR]}" && pwd)"
carry_libs "$BIN"
WORK="${2:-$(mktemp -d /tmp/eacgm-gpm-mig.XXXXXX)}"
mkdir -p "$WORK"

nvidia-smi --query-gpu=index,mig.mode.current --format=csv,noheader >"$WORK/mig_mode.csv"
nvidia-smi mig -lgi >"$WORK/lgi.txt" 2>&1 || true
nvidia-smi -L >"$WORK/list.txt"
"$BIN/eacgm" gpu --json >"$WORK/gpu.json" 2>"$WORK/gpu.err"
# A sampling pass's CPU with every GPU instance read (printed, not judged).
"$BIN/eacgm" gpu --json --watch --interval 1 --count 11 >"$WORK/cost.jsonl" 2>/dev/null
PORT=$((20000 + RANDOM % 20000))
"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" 2>"$WORK/serve.err" &
SERVE=$!
# Ready when the GPUs' series show; GPM's come from the second pass on.
for _ in $(seq 60); do
  curl -s "http://127.0.0.1:$PORT/metrics" | grep -q '^DCGM_FI_DEV_' && break
  sleep 1
done
sleep 3
curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt"

# A load in the first MIG device, if there is one and torch is here.
MIG_UUID=$(grep -o 'MIG-[0-9a-f-]*' "$WORK/list.txt" | head -1)
if [[ -n "$MIG_UUID" && -x "$PY" ]]; then
  CUDA_VISIBLE_DEVICES="$MIG_UUID" "$PY" - >"$WORK/load.out" 2>&1 <<'PYLOAD' &
import time, torch
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
end = time.time() + 12
while time.time() < end:
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
PYLOAD
  LOAD=$!
  sleep 6
  "$BIN/eacgm" gpu --json --watch --interval 1 --count 4 >"$WORK/load.jsonl" 2>/dev/null
  wait $LOAD
  echo "$MIG_UUID" >"$WORK/load_uuid.txt"
fi
kill -TERM $SERVE
wait $SERVE

python3 - "$WORK" <<'PY'
import json, os, re, sys
work = sys.argv[1]
fails = 0
def check(name, ok, detail):
    global fails
    print(f"{'PASS' if ok else 'FAIL'}: {name}: {detail}")
    fails += 0 if ok else 1

modes = {}
for line in open(f"{work}/mig_mode.csv"):
    idx, mode = [x.strip() for x in line.split(",")[:2]]
    modes[int(idx)] = mode == "Enabled"
# nvidia-smi mig -lgi rows: "|   0  MIG 1g.10gb          19        9          2:1     |"
gis = {}
for m in re.finditer(r"\|\s+(\d+)\s+MIG\s+(\S+)\s+\d+\s+(\d+)\s+\d+:\d+\s+\|", open(f"{work}/lgi.txt").read()):
    gis.setdefault(int(m.group(1)), {})[int(m.group(3))] = m.group(2)
doc = json.load(open(f"{work}/gpu.json"))
metrics = open(f"{work}/metrics.txt").read().splitlines()
sm = [l for l in metrics if l.startswith("DCGM_FI_PROF_SM_ACTIVE{")]
for g in doc["gpus"]:
    i = g["index"]
    mine = [l for l in sm if f'gpu="{i}",' in l]
    if not modes.get(i):
        check(f"GPU {i} (MIG off): as before", "gpm_instances" not in g and not any("GPU_I_ID" in l for l in mine)
              and (g["gpm"] is not None) == g["gpm_supported"] and len(mine) == (1 if g["gpm_supported"] else 0),
              f"gpm_supported {g['gpm_supported']}, {len(mine)} SM series")
        continue
    want = gis.get(i, {})
    got = {x["gpu_instance_id"]: x["profile"] for x in g.get("gpm_instances", [])}
    check(f"GPU {i} (MIG on): no whole-GPU counters", g["gpm"] is None and not any("GPU_I_ID" not in l for l in mine),
          g["gpm"])
    check(f"GPU {i}: one entry per GPU instance with its profile", got == want, f"eacgm {got}, nvidia-smi {want}")
    series = {int(re.search(r'GPU_I_ID="(\d+)"', l).group(1)): re.search(r'GPU_I_PROFILE="([^"]*)"', l).group(1)
              for l in mine if "GPU_I_ID" in l}
    check(f"GPU {i}: one SM series per GPU instance", series == want, f"/metrics {series}")
if os.path.exists(f"{work}/load_uuid.txt"):
    uuid = open(f"{work}/load_uuid.txt").read().strip()
    # nvidia-smi -L does not give the MIG device's GPU instance id: the busy one is found by
    # its activity, and must be the only one.
    passes = [json.loads(l) for l in open(f"{work}/load.jsonl") if l.startswith("{")][1:]
    per = {}
    for p in passes:
        for g in p["gpus"]:
            for x in g.get("gpm_instances", []):
                per.setdefault((g["index"], x["gpu_instance_id"]), []).append(x)
    means = {k: (sum(x["sm_active"] for x in v) / len(v), sum(x["tensor_active"] or 0 for x in v) / len(v))
             for k, v in per.items() if v}
    busy = [k for k, (s, t) in means.items() if s >= 0.5 and t >= 0.5]
    idle = [k for k, (s, t) in means.items() if s < 0.05]
    check(f"GEMM in {uuid}: its GPU instance busy, the others idle",
          len(busy) == 1 and len(idle) == len(means) - 1, {f"{k[0]}/{k[1]}": v for k, v in means.items()})
passes = [json.loads(l) for l in open(f"{work}/cost.jsonl") if l.startswith("{")][1:]
if passes:
    ms = sum(p["pass_cpu_seconds"] for p in passes) / len(passes) * 1e3
    n = sum(len(g.get("gpm_instances", [])) for g in passes[-1]["gpus"])
    print(f"pass CPU: {ms:.3f} ms mean over {len(passes)} passes, {n} GPU instances read, "
          f"{len(passes[-1]['gpus'])} GPUs")
sys.exit(1 if fails else 0)
PY
