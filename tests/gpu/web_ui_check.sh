#!/usr/bin/env bash
# Device check for the web UI: `eacgm serve` beside a short PyTorch training run on a real
# GPU serves the page at / (and its assets), and the routes its pages read hold the real
# figures: the GPU's power and temperature in /api/v1/gpus and the history, the training
# process in /api/v1/processes with GPU memory, its functions with p50/p99 and its named
# kernels in /api/v1/process, its kernel launches in /api/v1/work, the probes' overhead in
# /api/v1/overhead. Prints a table and PASS/FAIL per check.
#
# Usage: tests/gpu/web_ui_check.sh BIN_DIR [WORK_DIR]
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: web_ui_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-web.XXXXXX)}"
PORT=${PORT:-9979}
mkdir -p "$WORK"
carry_libs "$BIN"
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
need_torch_gpu

printf '[store]\ninterval_s = 2\n[gpu]\ninterval_s = 0.5\n' >"$WORK/eacgm.toml"
cat >"$WORK/train.py" <<'PY'
import sys, time, torch
dev = torch.device("cuda:0")
model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 2048, device=dev)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
torch.cuda.synchronize()
PY
"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" --config "$WORK/eacgm.toml" --store "sqlite:$WORK/eacgm.db" \
  2>"$WORK/serve.err" &
SERVE=$!
trap 'kill -TERM $SERVE 2>/dev/null; wait $SERVE 2>/dev/null' EXIT
for _ in $(seq 150); do
  "$PY" -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "http://127.0.0.1:$PORT/readyz" \
    2>/dev/null && break
  sleep 0.2
done
"$PY" "$WORK/train.py" 40 >"$WORK/train.out" 2>&1 &
TRAIN=$!
sleep 25  # mid-run: the process is live, the store has written several intervals

WORK_DIR="$WORK" "$PY" - "$PORT" "$TRAIN" <<'PY'
import json, sys, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
base = f"http://127.0.0.1:{port}"
def get(path):
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return r.status, r.headers, r.read()
def doc(path):
    return json.loads(get(path)[2])
rows, ok = [], True
def check(name, passed, detail):
    global ok
    ok &= bool(passed)
    rows.append((name, "PASS" if passed else "FAIL", detail))

status, headers, page = get("/")
assets = [a.split('"')[0] for a in page.decode().split('src="')[1:]] + [a.split('"')[0] for a in page.decode().split('href="/assets')[1:]]
check("page at /", status == 200 and b'<script type="module"' in page, f"{status} {headers.get('Content-Type')} {len(page)} B")
script = next((a for a in assets if a.startswith("/assets/") and a.endswith(".js")), None)
check("its script", script is not None and get(script)[0] == 200, str(script))
check("only its origin", b"http://" not in page and b"https://" not in page, "no absolute URL in the page")
gpus = doc("/api/v1/gpus")["gpus"]
g0 = gpus[0] if gpus else {}
check("GPU figures", g0.get("power_usage_milliwatts") and g0.get("temperature_gpu_celsius") is not None,
      f"{len(gpus)} GPUs; GPU 0 {g0.get('utilization_gpu_percent')}% {g0.get('power_usage_milliwatts')} mW {g0.get('temperature_gpu_celsius')} C")
hist = doc("/api/v1/history/gpus?since=5m&step=10s")["points"]
check("GPU history", any(p.get("power_mean_watts") for p in hist), f"{len(hist)} points")
procs = {p["pid"]: p for p in doc("/api/v1/processes")["processes"]}
me = procs.get(pid, {})
mem = sum(g.get("memory_max_bytes") or 0 for g in me.get("gpus", []))
check("training process listed", me and me.get("calls", 0) > 0 and mem > 0, f"calls {me.get('calls')}, GPU memory {mem}")
proc = doc(f"/api/v1/process?pid={pid}")
timed = [f for f in proc["functions"] if f.get("p99_ns")]
check("its functions with p50/p99", len(timed) > 0, f"{len(proc['functions'])} functions, {len(timed)} timed")
named = [w for w in proc["work"] if w["kind"] == "kernel" and w["name"]]
check("its named kernels", len(named) > 0, named[0]["name"][:60] if named else "none")
work = {w["pid"]: w for w in doc("/api/v1/work")["processes"]}
check("kernel launches in /api/v1/work", work.get(pid, {}).get("kernels", 0) > 0, str(work.get(pid)))
over = doc("/api/v1/overhead")
row = next((p for p in over["processes"] if p["pid"] == pid), None)
check("overhead row", row is not None and row["recent_ratio"] is not None, f"budget {over['budget']}, row {row}")
# What the pages read, kept for the screenshots drawn from this run
# (web/test/browser/replay_shots.mjs): each route's body and a few stream events.
import os, time
record = {"recorded_at_unix": time.time(), "pid": pid, "routes": {}}
paths = ["/api/v1/processes", "/api/v1/work", "/api/v1/overhead", "/api/v1/anomalies", "/api/v1/gpus",
         "/api/v1/history/gpus?since=15m&step=10s", "/api/v1/series?window=900", "/api/v1/counters",
         f"/api/v1/process?pid={pid}", "/api/v1/kernels", "/api/v1/memory", "/api/v1/nccl",
         f"/api/v1/python/folded?pid={pid}", "/api/v1/history/jobs?since=1h", "/api/v1/history/processes?since=1h",
         "/api/v1/history/gpus?since=1h", "/metrics"]
for path in paths:
    try:
        code, hdrs, body = get(path)
        record["routes"][path] = {"status": code, "type": hdrs.get("Content-Type"), "body": body.decode()}
    except Exception as e:  # a route the run cannot answer (404) is left out
        record["routes"][path] = {"status": getattr(e, "code", 0), "type": "application/json",
                                  "body": e.read().decode() if hasattr(e, "read") else "{}"}
events = []
try:
    with urllib.request.urlopen(base + "/api/v1/stream", timeout=5) as r:
        end = time.time() + 3.5
        chunk = b""
        while time.time() < end and chunk.count(b"\n\n") < 3:
            chunk += r.read1(65536)
        events = chunk.decode(errors="replace")
except Exception:
    events = ""
record["stream"] = events
# The tables' rates come from two readings a table refresh apart (6 s): the second one.
time.sleep(6)
record["later"] = {}
for path in ["/api/v1/processes", "/api/v1/work"]:
    code, hdrs, body = get(path)
    record["later"][path] = {"status": code, "type": hdrs.get("Content-Type"), "body": body.decode()}
work = os.environ.get("WORK_DIR")
if work:
    with open(os.path.join(work, "ui_routes.json"), "w") as f:
        json.dump(record, f)
check("routes kept for screenshots", bool(work) and len(record["routes"]) == len(paths),
      f"{sum(1 for v in record['routes'].values() if v['status'] == 200)} of {len(paths)} answered 200")
for r in rows:
    print(f"{r[0]:<34} {r[1]:<5} {r[2]}")
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
rc=$?
wait $TRAIN
exit $rc
