#!/usr/bin/env bash
# Device check for the Kubernetes DaemonSet's privileges (docs/kubernetes.md): `eacgm
# serve` with exactly the five capabilities the DaemonSet and the systemd unit grant
# (setpriv: bounding set, no_new_privs, root's uid as in the container), the ConfigMap's
# eacgm.toml (deploy/kubernetes/base/eacgm.toml), a token file and a SQLite store, while a
# PyTorch training loop runs in another mount namespace (as a container's would) with
# RANK=0. The agent must still sample the GPUs through NVML, probe the trainer's CUDA
# libraries (found through /proc/<pid>/root), read its rank from its environment, sample
# its Python stacks and write its history; /healthz answers without the token and
# /metrics only with it. Prints a table and PASS/FAIL per check.
#
# Usage: tests/gpu/k8s_privileges_check.sh BIN_DIR [WORK_DIR]
#   FAKE=1: no GPU needed: the build's fake NVML and fake libcuda (BIN_DIR is a build
#   dir with fake_nvml/, fake_libcuda/ and cuda_loop) and a Python loop, for checking
#   the script itself.
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch (or no setpriv).
set -uo pipefail

BIN="$(cd "${1:?usage: k8s_privileges_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-k8s.XXXXXX)}"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
PORT=${PORT:-9979}
FAKE=${FAKE:-0}
mkdir -p "$WORK"
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v setpriv >/dev/null || skip "setpriv (util-linux) not found"
command -v unshare >/dev/null || skip "unshare (util-linux) not found"
if [ "$FAKE" = 1 ]; then
  PY=$(command -v python3)
  export EACGM_NVML_LIBRARY="$BIN/fake_nvml/libnvidia-ml.so.1" EACGM_FAKE_NVML_SCENARIO=full
else
  PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"
  command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
  [[ -x "$PY" ]] || skip "$PY not found"
  nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"
fi

# The token as the Secret's file: a regular file, mode 0400, owned by root.
(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/token")
chmod 400 "$WORK/token"
TOKEN=$(cat "$WORK/token")
CAPS=+bpf,+perfmon,+sys_resource,+sys_ptrace,+dac_read_search

http() {  # PATH [token]: prints the status code, the body into $WORK/body
  "$PY" - "http://127.0.0.1:$PORT$1" "${2:-}" "$WORK/body" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1])
if sys.argv[2]:
    req.add_header("Authorization", "Bearer " + sys.argv[2])
try:
    with urllib.request.urlopen(req, timeout=5) as r:
        code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except Exception:
    code, body = 0, b""
open(sys.argv[3], "wb").write(body)
print(code)
PY
}

setpriv --bounding-set "-all,$CAPS" --no-new-privs \
  "$BIN/eacgm" serve --config "$SRC/deploy/kubernetes/base/eacgm.toml" --listen "0.0.0.0:$PORT" \
  --token-file "$WORK/token" --node k8s-node --store "sqlite:$WORK/eacgm.db" 2>"$WORK/serve.err" &
SERVE=$!
ready=0
for _ in $(seq 150); do [ "$(http /readyz)" = 200 ] && ready=1 && break; sleep 0.2; done
grep CapEff "/proc/$SERVE/status" | awk '{print $2}' >"$WORK/capeff"
# What the five are on this machine: the launching shell's bounding set may lack some.
setpriv --bounding-set "-all,$CAPS" grep CapBnd /proc/self/status | awk '{print $2}' >"$WORK/capexpected"

# The workload, in its own mount namespace (a container's view of the same files).
cat >"$WORK/train.py" <<'PY'
import sys, time
seconds = float(sys.argv[1])
try:
    import torch
    dev = torch.device("cuda:0")
    model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(256, 2048, device=dev)
    end = time.time() + seconds
    while time.time() < end:
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    torch.cuda.synchronize()
except ImportError:  # FAKE=1: no torch; Python work to sample
    end = time.time() + seconds
    while time.time() < end:
        sum(i * i for i in range(10000))
PY
if [ "$FAKE" = 1 ]; then
  unshare -m --propagation private env RANK=0 LD_LIBRARY_PATH="$BIN/fake_libcuda" \
    timeout 30 "$BIN/cuda_loop" 100000000 >/dev/null 2>&1 &
fi
unshare -m --propagation private env RANK=0 "$PY" "$WORK/train.py" 30 >"$WORK/train.out" 2>&1 &
WL=$!
# The rank comes from the process's environment, read when the agent learns of the
# process; give it up to 25 s.
for _ in $(seq 25); do
  sleep 1
  c_metrics=$(http /metrics "$TOKEN")
  grep -q '^eacgm_process_calls_total{.*rank="0"' "$WORK/body" && break
done
cp "$WORK/body" "$WORK/metrics.txt"
http /api/v1/processes "$TOKEN" >/dev/null; cp "$WORK/body" "$WORK/processes.json"
c_healthz=$(http /healthz)
c_noauth=$(http /metrics)
wait $WL
sleep 11  # one history interval (10 s) written
http /metrics "$TOKEN" >/dev/null
cp "$WORK/body" "$WORK/metrics2.txt"
kill -TERM $SERVE; wait $SERVE; echo "serve exit: $?" >>"$WORK/serve.err"

"$PY" - "$WORK" "$ready" "$c_healthz" "$c_noauth" "$c_metrics" <<'PY'
import re, sys
work, ready, c_h, c_n, c_m = sys.argv[1:6]
def series(path):
    out = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        name_labels, value = line.rsplit(" ", 1)
        out[name_labels] = float(value)
    return out
m, m2 = series(f"{work}/metrics.txt"), series(f"{work}/metrics2.txt")
def pick(s, prefix, pred=lambda k: True):
    return [v for k, v in s.items() if k.split("{")[0] == prefix and pred(k)]
capeff, capexp = open(f"{work}/capeff").read().strip(), open(f"{work}/capexpected").read().strip()
# The first scrape is taken as soon as the rank-0 series appears (its calls just begun);
# the second after the workload ran.
ranked = pick(m, "eacgm_process_calls_total", lambda k: 'rank="0"' in k) + \
    pick(m2, "eacgm_process_calls_total", lambda k: 'rank="0"' in k)
checks = [
    ("agent ready with the five capabilities", f"CapEff {capeff} (expected {capexp})", ready == "1" and capeff == capexp),
    ("/healthz without the token", c_h, c_h == "200"),
    ("/metrics without the token refused", c_n, c_n == "401"),
    ("/metrics with the token", c_m, c_m == "200"),
    ("GPUs sampled through NVML", pick(m, "eacgm_gpu_sampling_active") + [len(pick(m, "DCGM_FI_DEV_GPU_UTIL"))],
     pick(m, "eacgm_gpu_sampling_active") == [1.0] and len(pick(m, "DCGM_FI_DEV_GPU_UTIL")) > 0),
    ("calls of the rank-0 workload (other mount ns)", max(ranked) if ranked else None, bool(ranked) and max(ranked) > 1000),
    ("Python stack samples", pick(m2, "eacgm_python_stack_samples_total"), sum(pick(m2, "eacgm_python_stack_samples_total")) > 0),
    ("history written (store up, rows)", pick(m2, "eacgm_store_up") + pick(m2, "eacgm_store_rows_written_total"),
     pick(m2, "eacgm_store_up") == [1.0] and sum(pick(m2, "eacgm_store_rows_written_total")) > 0),
]
failed = 0
print(f"{'check':<48} {'value':<44} result")
for name, value, ok in checks:
    failed += not ok
    print(f"{name:<48} {str(value)[:44]:<44} {'PASS' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)
PY
rc=$?
[ $rc -eq 0 ] || { echo "--- serve.err"; tail -20 "$WORK/serve.err"; }
exit $rc
